import HummingbirdWebSocket
import NIOCore

/// Where a connection's outgoing BLIP frames go, each as one binary message, in order: a WebSocket, or any other
/// ordered channel of whole messages (the handler fuzz test runs two connections over memory).
public protocol BLIPFrameWriter: Sendable {
    func write(frame: [UInt8]) async throws
    /// Ends the channel after the frames written so far, telling the peer `code`.
    func close(_ code: WebSocketCloseCode, reason: String?) async throws
}

/// A WebSocket's outbound half, one binary message per frame.
struct WebSocketFrameWriter: BLIPFrameWriter {
    let outbound: WebSocketOutboundWriter

    func write(frame: [UInt8]) async throws {
        try await outbound.write(.binary(ByteBuffer(bytes: frame)))
    }

    func close(_ code: WebSocketCloseCode, reason: String?) async throws {
        try await outbound.close(code.webSocketErrorCode, reason: reason)
    }
}
