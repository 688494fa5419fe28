import Logging
import NIOCore
import NIOEmbedded
import NIOWebSocket
import Testing
import WebSocketHeartbeat

/// The heartbeat on a virtual clock: `EmbeddedEventLoop` runs the handler's timer only when the test advances
/// time, so the bounds below are exact and no test beside this one can delay them.
@Suite("WebSocket heartbeat")
struct WebSocketHeartbeatHandlerTests {
    static let interval = TimeAmount.seconds(1)

    private func makeChannel(role: WebSocketHeartbeatHandler.Role = .server) throws -> EmbeddedChannel {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(
            WebSocketHeartbeatHandler(interval: Self.interval, role: role, logger: Logger(label: "test")))
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 4984)).wait()
        return channel
    }

    private func readPing(_ channel: EmbeddedChannel) throws -> WebSocketFrame? {
        guard let frame = try channel.readOutbound(as: WebSocketFrame.self) else { return nil }
        #expect(frame.opcode == .ping)
        return frame
    }

    private func pong(answering ping: WebSocketFrame) -> WebSocketFrame {
        WebSocketFrame(fin: true, opcode: .pong, data: ping.unmaskedData)
    }

    @Test("the first ping goes out one interval after the connection opens, not before")
    func firstPingAfterOneInterval() throws {
        let channel = try makeChannel()
        channel.embeddedEventLoop.advanceTime(by: Self.interval - .milliseconds(1))
        #expect(try channel.readOutbound(as: WebSocketFrame.self) == nil)
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(1))
        let ping = try #require(try readPing(channel))
        #expect(ping.maskKey == nil, "a server does not mask its frames")
        #expect(channel.isActive)
    }

    @Test("a peer that leaves a ping unanswered is closed when the next one falls due")
    func unansweredPingCloses() throws {
        let channel = try makeChannel()
        channel.embeddedEventLoop.advanceTime(by: Self.interval)
        _ = try #require(try readPing(channel))
        channel.embeddedEventLoop.advanceTime(by: Self.interval - .milliseconds(1))
        #expect(channel.isActive)
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(1))
        #expect(!channel.isActive, "still open two intervals after the connection opened")
        #expect(try channel.readOutbound(as: WebSocketFrame.self) == nil, "a second ping went out instead")
    }

    @Test("a peer that answers every ping stays open over many intervals")
    func answeredPingsKeepTheConnection() throws {
        let channel = try makeChannel()
        for _ in 0..<20 {
            channel.embeddedEventLoop.advanceTime(by: Self.interval)
            let ping = try #require(try readPing(channel))
            try channel.writeInbound(pong(answering: ping))
            #expect(try channel.readInbound(as: WebSocketFrame.self)?.opcode == .pong, "the pong was not passed on")
        }
        #expect(channel.isActive)
        _ = try channel.finish()
    }

    @Test("a pong with another payload does not answer the ping, but any data frame does")
    func whatAnswersAPing() throws {
        let channel = try makeChannel()
        channel.embeddedEventLoop.advanceTime(by: Self.interval)
        _ = try #require(try readPing(channel))
        // A data frame: the peer is reachable, even if its pong waits behind the data.
        try channel.writeInbound(WebSocketFrame(fin: true, opcode: .binary, data: ByteBuffer(bytes: [1, 2, 3])))
        channel.embeddedEventLoop.advanceTime(by: Self.interval)
        #expect(channel.isActive)
        _ = try #require(try readPing(channel))
        // A stale pong (an earlier ping's payload) leaves the current ping unanswered.
        try channel.writeInbound(WebSocketFrame(fin: true, opcode: .pong, data: ByteBuffer(bytes: [0, 0, 0, 0])))
        channel.embeddedEventLoop.advanceTime(by: Self.interval)
        #expect(!channel.isActive)
    }

    @Test("a client masks its pings")
    func clientMasksPings() throws {
        let channel = try makeChannel(role: .client)
        channel.embeddedEventLoop.advanceTime(by: Self.interval)
        let ping = try #require(try readPing(channel))
        #expect(ping.maskKey != nil)
        _ = try channel.finish()
    }

    @Test("no ping follows a closed connection")
    func stopsWhenClosed() throws {
        let channel = try makeChannel()
        try channel.close().wait()
        channel.embeddedEventLoop.advanceTime(by: Self.interval * 5)
        #expect(try channel.readOutbound(as: WebSocketFrame.self) == nil)
    }
}
