import NIOWebSocket

/// The WebSocket close codes Couchbase Lite uses (spec §1.6).
public enum WebSocketCloseCode: Sendable, Hashable, CustomStringConvertible {
    /// 1000: the replication finished.
    case normal
    /// 1001: the endpoint is going away (shutdown).
    case goingAway
    /// 1002: the peer violated the WebSocket or BLIP protocol.
    case protocolError
    /// 1011: an unexpected internal failure.
    case internalError
    /// 4001: application-defined error that the peer should treat as transient and retry.
    case transientError
    /// 4002: application-defined error that the peer should not retry.
    case permanentError

    package var rawValue: UInt16 {
        switch self {
        case .normal: 1000
        case .goingAway: 1001
        case .protocolError: 1002
        case .internalError: 1011
        case .transientError: 4001
        case .permanentError: 4002
        }
    }

    var webSocketErrorCode: WebSocketErrorCode {
        switch self {
        case .normal: .normalClosure
        case .goingAway: .goingAway
        case .protocolError: .protocolError
        case .internalError: .unexpectedServerError
        case .transientError, .permanentError: .unknown(rawValue)
        }
    }

    public var description: String { String(rawValue) }
}
