import BLIPCodec

/// Why a BLIP connection stopped, as reported to callers waiting on it.
public enum BLIPConnectionError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The peer broke the BLIP protocol; the connection was closed with 1002.
    case protocolViolation(BLIPProtocolError)
    /// The peer sent a text WebSocket message, which BLIP does not use; closed with 1002.
    case textMessageReceived
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
        case .closedLocally(let code): "connection closed locally with code \(code)"
        case .closedByPeer: "connection closed by peer"
        case .writeFailed(let reason): "WebSocket write failed: \(reason)"
        case .alreadyStarted: "the BLIP connection was already started"
        case .encodingFailed(let error): "cannot encode message: \(error)"
        }
    }

    /// The close code that reports this failure to the peer.
    var closeCode: WebSocketCloseCode {
        switch self {
        case .protocolViolation, .textMessageReceived: .protocolError
        case .closedLocally(let code): code
        case .closedByPeer: .normal
        case .writeFailed, .alreadyStarted, .encodingFailed: .internalError
        }
    }
}
