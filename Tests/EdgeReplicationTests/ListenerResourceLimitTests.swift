import BLIPCodec
import BLIPConnection
import Foundation
import HummingbirdWSClient
import ReplicationProtocol
import SyncListener
import Testing
import UpstreamDialer

/// A client that stalls or floods cannot hold the listener's resources: silent connections are closed after the
/// idle timeout, and an oversized message closes only the connection that sent it.
@Suite("The sync listener's idle timeout and message size limit")
struct ListenerResourceLimitTests {
    /// Runs a BLIP connection over a dialed WebSocket (pinging every `heartbeat`); returns the server's close frame.
    @discardableResult
    static func withDialedPeer(
        port: Int, heartbeat: Duration? = nil, _ body: @escaping @Sendable (ActivePeer) async throws -> Void
    ) async throws -> WebSocketCloseFrame? {
        try await ListenerUpgradeTests.dialer(port: port, heartbeat: heartbeat).run { session in
            let connection = try BLIPConnection(subprotocol: session.subprotocol, logger: testLogger)
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await connection.run(inbound: session.inbound, outbound: session.outbound) }
                do {
                    try await body(ActivePeer(connection: connection))
                } catch {
                    await connection.close()
                    throw error
                }
                await connection.close()
                try await group.waitForAll()
            }
        }
    }

    /// A request any session answers: the checkpoint of a client that never saved one is a 404 error reply.
    static func expectAnswered(by peer: ActivePeer, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let missing = try await peer.errorReply(for: GetCheckpointRequest(client: "limits"))
        #expect(missing?.code == 404, sourceLocation: sourceLocation)
    }

    @Test("a client that sends nothing is closed after the idle timeout, and its slot is freed")
    func silentClientIsClosed() async throws {
        try await TestGateway.run(settings: TestGateway.settings(idleTimeout: .seconds(1))) { gateway in
            let started = ContinuousClock.now
            try await ListenerUpgradeTests.dialer(port: gateway.port).run { session in
                for try await _ in session.inbound {}
            }
            let elapsed = ContinuousClock.now - started
            #expect(elapsed >= .milliseconds(900) && elapsed < .seconds(10), "closed after \(elapsed)")
            try await eventually("the slot to be released") { await gateway.listener.status().activeConnections == 0 }
        }
    }

    @Test("a client that only pings, or keeps sending requests, outlives the idle timeout")
    func activeClientsStayOpen() async throws {
        // Wider margins than the silent-client test: under a loaded test run, a 1 s timeout can fall between
        // two pings that are late only because the machine is busy.
        let idleTimeout = Duration.seconds(3)
        try await TestGateway.run(settings: TestGateway.settings(idleTimeout: idleTimeout)) { gateway in
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    try await Self.withDialedPeer(port: gateway.port, heartbeat: .milliseconds(250)) { peer in
                        try await Task.sleep(for: idleTimeout * 2.5)
                        try await Self.expectAnswered(by: peer)
                    }
                }
                group.addTask {
                    try await Self.withDialedPeer(port: gateway.port) { peer in
                        let end = ContinuousClock.now + idleTimeout * 2.5
                        while ContinuousClock.now < end {
                            try await Self.expectAnswered(by: peer)
                            try await Task.sleep(for: .milliseconds(250))
                        }
                    }
                }
                try await group.waitForAll()
            }
        }
    }

    @Test("a message over max_message_size closes that connection with 1002; another one keeps working")
    func oversizedMessage() async throws {
        let limit = 64 << 10
        try await TestGateway.run(settings: TestGateway.settings(maxMessageSize: limit)) { gateway in
            try await Self.withDialedPeer(port: gateway.port) { bystander in
                try await Self.expectAnswered(by: bystander)
                let closeFrame = try await Self.withDialedPeer(port: gateway.port) { flooder in
                    // Well within one message of a normal session, but four times the configured limit.
                    let body = (0..<(4 * limit)).map { UInt8(truncatingIfNeeded: $0 &* 31) }
                    let oversized = BLIPMessage(
                        kind: .request, properties: ["Profile": "getCheckpoint", "client": "x"],
                        body: body, isCompressed: false)
                    await #expect(throws: (any Error).self) { _ = try await flooder.connection.sendRequest(oversized) }
                }
                #expect(closeFrame?.closeCode == .protocolError)
                #expect(closeFrame?.reason?.contains("exceeds the limit of \(limit)") == true, "\(String(describing: closeFrame))")
                try await Self.expectAnswered(by: bystander)
            }
        }
    }
}
