import EdgeGatewayTestSupport
import Foundation
import Logging
import ServiceLifecycleTestKit
import SyncListener
import Testing

/// The listener's own handling of WebSocket control frames (`BLIPConnection.run(serverSide:)`), over loopback with a
/// client written byte by byte: pongs, the close handshake in both directions, and the close a shutdown sends.
@Suite("Server WebSocket: pings, the close handshake and shutdown")
struct ServerWebSocketTests {
    static let upgrade = HostileInputTests.upgrade

    static func closeFrame(_ payload: [UInt8]) -> [UInt8] { webSocketFrame(opcode: 0x8, payload: payload) }

    static func closePayload(_ code: UInt16, reason: String = "") -> [UInt8] {
        [UInt8(code >> 8), UInt8(code & 0xFF)] + Array(reason.utf8)
    }

    @Test("a ping is answered with a pong carrying its payload, on a connection that stays open for the close after it")
    func pingIsAnswered() async throws {
        try await TestGateway.run { gateway in
            let payload = Array("heartbeat-17".utf8)
            // The close behind the ping ends the exchange as soon as it is answered, however loaded the machine.
            let exchange = try await RawExchange.run(
                port: gateway.port,
                chunks: [
                    Self.upgrade, webSocketFrame(opcode: 0x9, payload: payload),
                    Self.closeFrame(Self.closePayload(1000)),
                ],
                pause: .milliseconds(150), quietFor: .seconds(15))
            #expect(exchange.status == 101)
            let frames = serverFrames(exchange.afterHead)
            #expect(frames.map(\.opcode) == [0xA, 0x8], "frames: \(frames.map(\.opcode))")
            #expect(frames.first.map { Array($0.payload) } == payload)
            #expect(closeCode(inServerFrames: exchange.afterHead) == 1000)
        }
    }

    @Test(
        "the peer's close is answered with its code (1000 when it has none, 1002 when it is malformed) and the socket closes",
        arguments: [
            (closePayload(1000), 1000), (closePayload(4001, reason: "bye"), 4001), (closePayload(1001), 1001),
            ([], 1000), (closePayload(1005), 1002), (closePayload(999), 1002), ([0x03], 1002),
        ])
    func peerCloseIsAnswered(payload: [UInt8], answer: Int) async throws {
        try await TestGateway.run { gateway in
            let exchange = try await RawExchange.run(
                port: gateway.port, chunks: [Self.upgrade, Self.closeFrame(payload)], pause: .milliseconds(150),
                quietFor: .seconds(10))
            #expect(exchange.status == 101)
            #expect(closeCode(inServerFrames: exchange.afterHead) == answer)
            #expect(serverFrames(exchange.afterHead).count == 1)
            #expect(exchange.closedByServer)
            try await eventually("the slot to be released") {
                await gateway.listener.status().activeConnections == 0
            }
        }
    }

    @Test("a graceful shutdown sends every replication client 1001 (going away), which Couchbase Lite retries")
    func shutdownSendsGoingAway() async throws {
        try await testGracefulShutdown { trigger in
            try await TestGateway.run { gateway in
                async let exchange = RawExchange.run(
                    port: gateway.port, chunks: [Self.upgrade], quietFor: .seconds(20))
                try await eventually("the client to be connected") {
                    await gateway.listener.status().activeConnections == 1
                }
                trigger.triggerGracefulShutdown()
                let ended = try await exchange
                #expect(ended.status == 101)
                #expect(closeCode(inServerFrames: ended.afterHead) == 1001)
                #expect(ended.closedByServer)
            }
        }
    }
}
