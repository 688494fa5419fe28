import Logging
import NIOCore
import NIOEmbedded
import NIOHTTP1
import Testing

@testable import SyncListener

/// The listener's timer-driven handlers on a virtual clock: `EmbeddedEventLoop` fires their timers only when
/// the test advances time, so each bound is checked exactly, whatever else the machine is doing.
@Suite("Connection timers: idle timeout and handshake deadline")
struct ConnectionTimerTests {
    private static let logger = Logger(label: "test")

    private func channel(with handler: some ChannelHandler) throws -> EmbeddedChannel {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(handler)
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 4984)).wait()
        return channel
    }

    @Test("a connection on which nothing arrives is closed after the idle timeout, not before")
    func idleConnectionIsClosed() throws {
        let channel = try channel(with: IdleConnectionCloser(timeout: .seconds(10), logger: Self.logger))
        channel.embeddedEventLoop.advanceTime(by: .seconds(10) - .milliseconds(1))
        #expect(channel.isActive)
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(1))
        #expect(!channel.isActive)
    }

    @Test("every arriving byte restarts the idle clock")
    func readsKeepTheConnection() throws {
        let channel = try channel(with: IdleConnectionCloser(timeout: .seconds(10), logger: Self.logger))
        for _ in 0..<10 {
            channel.embeddedEventLoop.advanceTime(by: .seconds(9))
            try channel.writeInbound(ByteBuffer(bytes: [0x82, 0x00]))
            #expect(channel.isActive)
        }
        channel.embeddedEventLoop.advanceTime(by: .seconds(10))
        #expect(!channel.isActive, "not closed ten seconds after the last read")
    }

    @Test("an idle WebSocket connection is told why with a close frame (1001) before it is closed")
    func idleWebSocketGetsAGoingAwayFrame() throws {
        let closer = IdleConnectionCloser(timeout: .seconds(10), logger: Self.logger)
        closer.speaksWebSocket = true
        let channel = try channel(with: closer)
        channel.embeddedEventLoop.advanceTime(by: .seconds(10))
        let frame = try #require(try channel.readOutbound(as: ByteBuffer.self))
        #expect(Array(frame.readableBytesView) == IdleConnectionCloser.goingAwayFrame)
        #expect(Array(frame.readableBytesView.prefix(4)) == [0x88, 14, 0x03, 0xE9])
        #expect(!channel.isActive)
    }

    @Test("a client that has not sent a whole request head by the deadline is closed")
    func slowHandshakeIsClosed() throws {
        let channel = try channel(with: HandshakeDeadline(timeout: .seconds(5), logger: Self.logger))
        channel.embeddedEventLoop.advanceTime(by: .seconds(5) - .milliseconds(1))
        #expect(channel.isActive)
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(1))
        #expect(!channel.isActive)
    }

    @Test("the deadline stops at the first request head, and the handler leaves the pipeline")
    func requestHeadStopsTheDeadline() throws {
        let channel = try channel(with: HandshakeDeadline(timeout: .seconds(5), logger: Self.logger))
        channel.embeddedEventLoop.advanceTime(by: .seconds(4))
        let head = HTTPRequestHead(version: .http1_1, method: .GET, uri: "/db/_blipsync")
        try channel.writeInbound(HTTPServerRequestPart.head(head))
        #expect(try channel.readInbound(as: HTTPServerRequestPart.self) == .head(head))
        channel.embeddedEventLoop.advanceTime(by: .seconds(60))
        #expect(channel.isActive)
        #expect(throws: (any Error).self) { try channel.pipeline.syncOperations.handler(type: HandshakeDeadline.self) }
        _ = try channel.finish()
    }
}
