import BLIPCodec

/// Why a BLIP connection stopped, as reported to callers waiting on it.
public enum BLIPConnectionError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The peer broke the BLIP protocol; the connection was closed with 1002.
    case protocolViolation(BLIPProtocolError)
    /// The peer sent a text WebSocket message, which BLIP does not use; closed with 1002.
    case textMessageReceived
    /// The peer's WebSocket frames did not form whole messages; closed with 1002.
    case unexpectedWebSocketFrame(WebSocketFragmentationError)
    /// We closed the connection with this code.
    case closedLocally(WebSocketCloseCode)
    /// The WebSocket ended without a BLIP-level failure.
    case closedByPeer
    /// Writing to the WebSocket failed.
    case writeFailed(String)
    /// `run` was called on a connection that already ran.
    case alreadyStarted
    /// The message could not be encoded.
    case encodingFailed(BLIPEncodingError)

    public var description: String {
        switch self {
        case .protocolViolation(let error): "BLIP protocol violation: \(error)"
        case .textMessageReceived: "text WebSocket message received; BLIP uses binary messages only"
        case .unexpectedWebSocketFrame(let error): "\(error)"
        case .closedLocally(let code): "connection closed locally with code \(code)"
        case .closedByPeer: "connection closed by peer"
        case .writeFailed(let reason): "WebSocket write failed: \(reason)"
        case .alreadyStarted: "the BLIP connection was already started"
        case .encodingFailed(let error): "cannot encode message: \(error)"
        }
    }

    /// The close code that reports this failure to the peer.
    ///
    /// Protocol violations use 1002 (RFC 6455's protocol error). LiteCore itself closes with 1011 on a CRC
    /// mismatch (spec §2.6); Couchbase Lite treats both as permanent errors, so the difference only shows
    /// in logs.
    var closeCode: WebSocketCloseCode {
        switch self {
        case .protocolViolation, .textMessageReceived, .unexpectedWebSocketFrame: .protocolError
        case .closedLocally(let code): code
        case .closedByPeer: .normal
        case .writeFailed, .alreadyStarted, .encodingFailed: .internalError
        }
    }
}

/// How a peer's WebSocket frames failed to make up messages (RFC 6455 §5.4).
public enum WebSocketFragmentationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A continuation frame arrived while no fragmented message was open.
    case continuationWithoutFirstFragment
    /// A new data frame arrived before the fragmented message in progress was finished.
    case newMessageInsideFragmentedMessage

    public var description: String {
        switch self {
        case .continuationWithoutFirstFragment:
            "WebSocket continuation frame without a first fragment"
        case .newMessageInsideFragmentedMessage:
            "WebSocket data frame inside an unfinished fragmented message"
        }
    }
}
