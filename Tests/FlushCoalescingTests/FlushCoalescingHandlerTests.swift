import FlushCoalescing
import NIOCore
import NIOEmbedded
import Testing

@Suite("Flush coalescing")
struct FlushCoalescingHandlerTests {
    private func makeChannel() throws -> EmbeddedChannel {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(FlushCoalescingHandler())
        return channel
    }

    private func outbound(_ channel: EmbeddedChannel) throws -> [String] {
        var written: [String] = []
        while let buffer = try channel.readOutbound(as: ByteBuffer.self) {
            written.append(String(buffer: buffer))
        }
        return written
    }

    @Test("flushes issued in one turn of the event loop reach the socket as one, once the queued tasks ran")
    func burstIsFlushedOnce() throws {
        let channel = try makeChannel()
        let flushes = FlushCounter()
        try channel.pipeline.syncOperations.addHandler(flushes, position: .first)
        for text in ["a", "b", "c"] {
            channel.writeAndFlush(ByteBuffer(string: text), promise: nil)
        }
        #expect(try outbound(channel).isEmpty)
        #expect(flushes.count == 0)
        channel.embeddedEventLoop.run()
        #expect(try outbound(channel) == ["a", "b", "c"])
        #expect(flushes.count == 1)

        channel.writeAndFlush(ByteBuffer(string: "d"), promise: nil)
        channel.embeddedEventLoop.run()
        #expect(try outbound(channel) == ["d"])
        #expect(flushes.count == 2)
        _ = try channel.finish()
    }

    @Test("a close sends what was written before it, even with its flush still deferred")
    func closeFlushesFirst() throws {
        let channel = try makeChannel()
        channel.writeAndFlush(ByteBuffer(string: "last words"), promise: nil)
        let closed = channel.close()
        #expect(try outbound(channel) == ["last words"])
        channel.embeddedEventLoop.run()
        try closed.wait()
    }
}

/// Counts the flushes that pass it on their way to the socket.
private final class FlushCounter: ChannelOutboundHandler {
    typealias OutboundIn = NIOAny
    var count = 0

    func flush(context: ChannelHandlerContext) {
        count += 1
        context.flush()
    }
}
