import Logging
import NIOCore
import NIOEmbedded
import NIOHTTP1
import Testing

@testable import SyncListener

/// The guard in front of an upgraded connection's frame decoder, on an embedded channel.
@Suite("A request sent behind the upgrade request")
struct RequestBehindUpgradeGuardTests {
    static let head = HTTPServerRequestPart.head(
        HTTPRequestHead(version: .http1_1, method: .GET, uri: "/", headers: ["Host": "x"]))

    @Test("NIOAny's storage still shows what it holds: request parts are recognised, bytes are not")
    func recognisesRequestParts() {
        #expect(RequestBehindUpgradeGuard.holdsHTTPRequestPart(NIOAny(Self.head)))
        #expect(RequestBehindUpgradeGuard.holdsHTTPRequestPart(NIOAny(HTTPServerRequestPart.end(nil))))
        #expect(!RequestBehindUpgradeGuard.holdsHTTPRequestPart(NIOAny(ByteBuffer(bytes: [0x82, 0x00]))))
        #expect(!RequestBehindUpgradeGuard.holdsHTTPRequestPart(NIOAny("text")))
    }

    @Test("bytes pass through; request parts close the connection and go no further")
    func closesOnRequestParts() throws {
        let channel = EmbeddedChannel(handler: RequestBehindUpgradeGuard(logger: Logger(label: "test")))
        try channel.writeInbound(ByteBuffer(bytes: [0x82, 0x00]))
        #expect(try channel.readInbound(as: ByteBuffer.self) == ByteBuffer(bytes: [0x82, 0x00]))
        try channel.writeInbound(Self.head)
        #expect(try channel.readInbound(as: HTTPServerRequestPart.self) == nil)
        #expect(!channel.isActive)
    }

    @Test("the guard checks the upgrade handler's replay and leaves at the read-complete that ends it")
    func leavesAfterTheReplay() throws {
        let guardHandler = RequestBehindUpgradeGuard(logger: Logger(label: "test"))
        let channel = EmbeddedChannel(handler: guardHandler)
        channel.pipeline.syncOperations.fireChannelReadComplete()
        #expect(throws: Never.self, "the guard is still in the pipeline") {
            try channel.pipeline.syncOperations.context(handler: guardHandler)
        }
        channel.pipeline.syncOperations.fireUserInboundEventTriggered(
            HTTPServerUpgradeEvents.upgradeComplete(toProtocol: "websocket", upgradeRequest: Self.head.requestHead))
        // The replay: reads without a read-complete, each still checked.
        channel.pipeline.syncOperations.fireChannelRead(NIOAny(ByteBuffer(bytes: [0x82, 0x00])))
        #expect(try channel.readInbound(as: ByteBuffer.self) == ByteBuffer(bytes: [0x82, 0x00]))
        #expect(throws: Never.self, "the guard is still in the pipeline") {
            try channel.pipeline.syncOperations.context(handler: guardHandler)
        }
        channel.pipeline.syncOperations.fireChannelReadComplete()
        #expect(throws: ChannelPipelineError.notFound) {
            try channel.pipeline.syncOperations.context(handler: guardHandler)
        }
        try channel.writeInbound(ByteBuffer(bytes: [0x82, 0x00]))
        #expect(try channel.readInbound(as: ByteBuffer.self) == ByteBuffer(bytes: [0x82, 0x00]))
    }
}

extension HTTPServerRequestPart {
    fileprivate var requestHead: HTTPRequestHead {
        guard case .head(let head) = self else { preconditionFailure("not a head") }
        return head
    }
}
