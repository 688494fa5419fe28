import BLIPCodec

/// Why a BLIP connection stopped, as reported to callers waiting on it.
public enum BLIPConnectionError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The peer broke the BLIP protocol; the connection was closed with 1002.
    case protocolViolation(BLIPProtocolError)
    /// The peer sent a text WebSocket message, which BLIP does not use; closed with 1002.
    case textMessageReceived
    /// The peer sent a WebSocket frame that RFC 6455 forbids here; closed with 1002.
    case unexpectedWebSocketFrame(WebSocketFrameError)
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

/// How a peer's WebSocket frames broke RFC 6455: they failed to make up messages (§5.4), or used an opcode or a
/// reserved bit that no negotiated extension defines (§5.2).
public enum WebSocketFrameError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A continuation frame arrived while no fragmented message was open.
    case continuationWithoutFirstFragment
    /// A new data frame arrived before the fragmented message in progress was finished.
    case newMessageInsideFragmentedMessage
    /// An opcode RFC 6455 reserves (0x3–0x7, 0xB–0xF).
    case reservedOpcode(UInt8)
    /// RSV1, RSV2 or RSV3 set, although no extension was negotiated.
    case reservedBitsSet

    public var description: String {
        switch self {
        case .continuationWithoutFirstFragment:
            "WebSocket continuation frame without a first fragment"
        case .newMessageInsideFragmentedMessage:
            "WebSocket data frame inside an unfinished fragmented message"
        case .reservedOpcode(let opcode):
            "WebSocket frame with the reserved opcode \(opcode)"
        case .reservedBitsSet:
            "WebSocket frame with a reserved bit set and no extension negotiated"
        }
    }
}
