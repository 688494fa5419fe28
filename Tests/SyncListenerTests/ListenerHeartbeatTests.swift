import EdgeGatewayTestSupport
import Foundation
import NIOCore
import NIOPosix
import ReplicationProtocol
import SyncListener
import Testing
import UpstreamDialer

/// The listener pings its clients every `heartbeat`: one that does not answer is dropped within two heartbeats
/// and frees its slot; one that answers (as Couchbase Lite does) stays as long as it likes.
@Suite("The sync listener's heartbeat")
struct ListenerHeartbeatTests {
    static let heartbeat = Duration.seconds(1)

    @Test("a client that never answers the pings is closed within two heartbeats, and its slot is freed")
    func unansweringClientIsClosed() async throws {
        let settings = TestGateway.settings(idleTimeout: nil, heartbeat: Self.heartbeat)
        try await TestGateway.run(settings: settings) { gateway in
            // A raw socket: it upgrades, then only reads, so nothing answers the pings.
            let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .connect(host: "127.0.0.1", port: gateway.port) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                    }
                }
            let request =
                "GET /\(TestGateway.databaseName)/_blipsync HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\n"
                + "Upgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                + "Sec-WebSocket-Protocol: BLIP_3+CBMobile_3\r\n\r\n"
            // The server's heartbeat starts after it has read the request, so the time of sending is a lower
            // bound of its start. The time this client reads the 101 is not: on a loaded machine it has read the
            // 101 late, with the ping and the close right behind it (0.98 s before the close, once).
            let sentAt = ContinuousClock.now
            let (upgradedAt, closedAt, received) = try await channel.executeThenClose { inbound, outbound in
                try await outbound.write(ByteBuffer(string: request))
                var received: [UInt8] = []
                var upgradedAt: ContinuousClock.Instant?
                for try await chunk in inbound {
                    received += chunk.readableBytesView
                    if upgradedAt == nil, let head = String(bytes: received, encoding: .isoLatin1),
                        let end = head.range(of: "\r\n\r\n")
                    {
                        #expect(head.hasPrefix("HTTP/1.1 101"))
                        upgradedAt = .now
                        received = Array(head[end.upperBound...].unicodeScalars.map { UInt8($0.value) })
                    }
                }
                return (upgradedAt, ContinuousClock.now, received)
            }
            _ = try #require(upgradedAt)
            // The handler's own bounds (first ping after one heartbeat, closed when the second falls due) are
            // checked on a virtual clock in WebSocketHeartbeatTests; here, only that the listener installs it.
            // A timer never fires early, so the lower bound holds however loaded the machine is.
            #expect(closedAt - sentAt >= Self.heartbeat * 2, "closed \(closedAt - sentAt) after the request")
            #expect(received.first == 0x89, "the first frame the server sent was not a ping: \(received.prefix(4))")
            try await eventually("the slot to be released") { await gateway.listener.status().activeConnections == 0 }
        }
    }

    @Test("a client that answers the pings stays connected and served past several heartbeats")
    func answeringClientStays() async throws {
        // That answered pings keep a connection is shown on a virtual clock (WebSocketHeartbeatTests); this is the
        // wiring: the dialer's pongs reach the listener's handler. The dialer answers from its own tasks, which the
        // suites running beside it on 2 cores have delayed by seconds (4 s once dropped it), so the heartbeat is
        // long and two pings are enough.
        let heartbeat = Duration.seconds(8)
        let settings = TestGateway.settings(idleTimeout: nil, heartbeat: heartbeat)
        try await TestGateway.run(settings: settings) { gateway in
            // The dialer's WebSocket answers pings with pongs, as Couchbase Lite's does; it sends none itself.
            try await ListenerResourceLimitTests.withDialedPeer(port: gateway.port) { peer in
                try await Task.sleep(for: heartbeat * 2.5)
                #expect(await peer.connection.isOpen)
                try await ListenerResourceLimitTests.expectAnswered(by: peer)
                #expect(await gateway.listener.status().activeConnections == 1)
            }
        }
    }
}
