import NIOCore
import NIOWebSocket
import Synchronization

/// The server's half of a WebSocket that `BLIPConnection.run(serverSide:)` runs: BLIP frames, pongs and the close
/// handshake (RFC 6455 §5.5.1, §7), written straight to the channel's async writer. A server masks nothing.
final class ServerWebSocketWriter: BLIPFrameWriter {
    let outbound: NIOAsyncChannelOutboundWriter<WebSocketFrame>
    let channel: any Channel
    /// How long a peer has to answer our close frame before the socket is closed under it.
    let closeTimeout: TimeAmount
    private let sentClose = Atomic<Bool>(false)
    private let receivedClose = Atomic<Bool>(false)

    init(outbound: NIOAsyncChannelOutboundWriter<WebSocketFrame>, channel: any Channel, closeTimeout: TimeAmount) {
        self.outbound = outbound
        self.channel = channel
        self.closeTimeout = closeTimeout
    }

    /// Whether the peer's close frame arrived: without one the socket dropped under the connection.
    var peerSentClose: Bool { receivedClose.load(ordering: .acquiring) }

    /// Whether this side's close frame went out, so that the peer's is the answer to it.
    var hasSentClose: Bool { sentClose.load(ordering: .acquiring) }

    /// Closes the socket when the frame cannot be written: the connection is over without a close frame of its
    /// own, and nothing else would end the reading of a peer that stays silent.
    func write(frame: [UInt8]) async throws {
        do {
            try await outbound.write(
                WebSocketFrame(fin: true, opcode: .binary, data: channel.allocator.buffer(bytes: frame)))
        } catch {
            channel.close(promise: nil)
            throw error
        }
    }

    func close(_ code: WebSocketCloseCode, reason: String?) async throws {
        try await sendClose(code: code.rawValue, reason: reason)
    }

    func pong(_ ping: WebSocketFrame) async throws {
        try await outbound.write(WebSocketFrame(fin: true, opcode: .pong, data: ping.unmaskedData))
    }

    /// Answers the peer's close frame with one of ours, unless ours went first.
    ///
    /// A well-formed close is answered with its own code, as RFC 6455 §5.5.1 suggests; one without a code with 1000;
    /// a malformed one (a single byte, or a code no endpoint may send) with 1002.
    func answerClose(_ frame: WebSocketFrame) async throws {
        receivedClose.store(true, ordering: .releasing)
        var payload = frame.unmaskedData
        let code: UInt16 =
            switch (payload.readableBytes, payload.readInteger(as: UInt16.self)) {
            case (0, _): WebSocketCloseCode.normal.rawValue
            case (_, let code?) where Self.isSendable(code): code
            default: WebSocketCloseCode.protocolError.rawValue
            }
        try await sendClose(code: code, reason: nil)
    }

    /// Close codes an endpoint may put in a close frame (RFC 6455 §7.4; 1005, 1006 and 1015 are only reported).
    static func isSendable(_ code: UInt16) -> Bool {
        switch code {
        case 1000...1003, 1007...1014, 3000...4999: true
        default: false
        }
    }

    /// Sends our close frame once, then ends our half of the socket, and closes the socket after `closeTimeout`
    /// if the peer has not closed it by then.
    private func sendClose(code: UInt16, reason: String?) async throws {
        guard !sentClose.exchange(true, ordering: .acquiringAndReleasing) else { return }
        var payload = channel.allocator.buffer(capacity: 2 + (reason?.utf8.count ?? 0))
        payload.writeInteger(code)
        if let reason {
            payload.writeString(reason)
        }
        defer {
            outbound.finish()
            let channel = self.channel
            let deadline = channel.eventLoop.scheduleTask(in: closeTimeout) { channel.close(promise: nil) }
            channel.closeFuture.whenComplete { _ in deadline.cancel() }
        }
        try await outbound.write(WebSocketFrame(fin: true, opcode: .connectionClose, data: payload))
    }
}
