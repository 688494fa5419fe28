import BLIPCodec
import BLIPConnection
import EdgeGatewayTestSupport
import Foundation
import HummingbirdWSClient
import NIOCore
import NIOWebSocket
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
        try await TestGateway.dialer(port: port, heartbeat: heartbeat).run { session in
            try await ActivePeer.run(
                subprotocol: session.subprotocol, inbound: session.inbound, outbound: session.outbound, body)
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
            do {
                try await TestGateway.dialer(port: gateway.port).run { session in
                    for try await _ in session.inbound {}
                }
            } catch UpstreamDialError.handshakeIncomplete {
                // On a loaded machine the upgrade can take longer than the timeout, during which the client
                // sends nothing either: the listener then closes it before the 101, which is the same rule.
            }
            let elapsed = ContinuousClock.now - started
            #expect(elapsed >= .milliseconds(900) && elapsed < .seconds(10), "closed after \(elapsed)")
            try await eventually("the slot to be released") { await gateway.listener.status().activeConnections == 0 }
        }
    }

    @Test("an upgraded client that goes silent gets a close frame (1001, going away) before the drop")
    func silentUpgradedClientGetsCloseFrame() async throws {
        try await TestGateway.run(settings: TestGateway.settings(idleTimeout: .seconds(3))) { gateway in
            var closeFrame: WebSocketCloseFrame?
            for attempt in 1...5 {
                do {
                    closeFrame = try await Self.withDialedPeer(port: gateway.port) { peer in
                        try await eventually("the listener to close the idle connection") {
                            await !peer.connection.isOpen
                        }
                    }
                    break
                } catch UpstreamDialError.handshakeIncomplete where attempt < 5 {
                    // A loaded machine can take longer than the timeout to finish the upgrade, during which
                    // the client is silent too; that close (before the 101) has no frame to send. Try again.
                }
            }
            #expect(closeFrame?.closeCode == .goingAway)
            #expect(closeFrame?.reason == "idle timeout")
        }
    }

    @Test("a client that only pings, or keeps sending requests, outlives the idle timeout")
    func activeClientsStayOpen() async throws {
        // The clients mean to send every 250 ms. With the whole suite running in parallel on two cores, their
        // sends once came up to a second apart and the listener, with a 2 s timeout, saw 2 s of silence; with
        // 4 s, a 1.8 s gap once went with a close (2026-11-24), and with 6 s a 1.6 s gap (2026-11-27), so the
        // whole process had stalled for longer. The idle closer's own bounds are checked on a virtual clock
        // (ConnectionTimerTests); this is the wiring, that pings and requests reach it as arrivals.
        let idleTimeout = Duration.seconds(10)
        let duration = idleTimeout * 2
        try await TestGateway.run(settings: TestGateway.settings(idleTimeout: idleTimeout)) { gateway in
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    let sends = SendTimes()
                    // The upgrade request counts as the client's first frame.
                    await sends.mark()
                    do {
                        try await TestGateway.dialer(port: gateway.port).run { session in
                            try await withThrowingTaskGroup(of: Void.self) { pinging in
                                pinging.addTask {
                                    for try await _ in session.inbound {}
                                    throw BLIPConnectionError.closedByPeer
                                }
                                pinging.addTask {
                                    let end = ContinuousClock.now + duration
                                    while ContinuousClock.now < end {
                                        await sends.mark()
                                        try await session.outbound.write(
                                            .custom(WebSocketFrame(fin: true, opcode: .ping, data: ByteBuffer())))
                                        try await Task.sleep(for: .milliseconds(250))
                                    }
                                }
                                try await pinging.next()
                                pinging.cancelAll()
                            }
                        }
                    } catch {
                        try await Self.expectSilence(in: sends, longEnoughFor: idleTimeout, explaining: error)
                    }
                }
                group.addTask {
                    let sends = SendTimes()
                    // The upgrade request counts as the client's first frame.
                    await sends.mark()
                    do {
                        try await Self.withDialedPeer(port: gateway.port) { peer in
                            let end = ContinuousClock.now + duration
                            while ContinuousClock.now < end {
                                await sends.mark()
                                try await Self.expectAnswered(by: peer)
                                try await Task.sleep(for: .milliseconds(250))
                            }
                        }
                    } catch {
                        try await Self.expectSilence(in: sends, longEnoughFor: idleTimeout, explaining: error)
                    }
                }
                try await group.waitForAll()
            }
        }
    }

    /// A closed connection is only right if the client itself fell silent: on a loaded machine its sending task
    /// can be starved for seconds. Half the timeout allows for frames also delayed on their way to the listener.
    static func expectSilence(
        in sends: SendTimes, longEnoughFor idleTimeout: Duration, explaining error: any Error,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let gap = await sends.longestGap(until: .now)
        #expect(
            gap >= idleTimeout / 2,
            "closed (\(error)) although the client sent something at least every \(gap)",
            sourceLocation: sourceLocation)
    }

    @Test(
        "refused frames count as protocol errors, not network ones: a reserved opcode, a 126-byte ping, unmasked, text",
        arguments: [
            webSocketFrame(opcode: 0x3, payload: [1, 2, 3]),
            webSocketFrame(opcode: 0x9, payload: Array(repeating: 7, count: 126)),
            webSocketFrame(opcode: 0x2, payload: [1, 0, 0], masked: false),
            webSocketFrame(opcode: 0x1, payload: Array("hello".utf8)),
        ])
    func refusedFrameIsAProtocolError(frame: [UInt8]) async throws {
        try await TestGateway.run { gateway in
            let counters = try #require(gateway.listener.databaseReplicationCounters["db"])
            let exchange = try await RawExchange.run(
                port: gateway.port, chunks: HostileInputTests.afterUpgrade(frame), quietFor: .seconds(10))
            #expect(exchange.received.starts(with: Array("HTTP/1.1 101".utf8)))
            try await eventually("the session to end") { await gateway.listener.status().activeConnections == 0 }
            try await eventually("the error to be counted") {
                counters.errors(of: .protocol) + counters.errors(of: .network) > 0
            }
            #expect(counters.errors(of: .protocol) == 1)
            #expect(counters.errors(of: .network) == 0)
        }
    }

    @Test("a client that drops its socket without a close frame counts as a network error of its database")
    func droppedSocket() async throws {
        try await TestGateway.run { gateway in
            let counters = try #require(gateway.listener.databaseReplicationCounters["db"])
            // A session that ends with its close frame is not an error.
            _ = try await Self.withDialedPeer(port: gateway.port) { peer in try await Self.expectAnswered(by: peer) }
            try await eventually("the clean session to end") { await gateway.listener.status().activeConnections == 0 }
            // The slot is freed as the socket closes, a moment before the session's ending is looked at.
            try await Task.sleep(for: .milliseconds(300))
            #expect(counters.errors(of: .network) == 0)

            let request = ListenerHandshakeLayoutTests.request(
                port: gateway.port, key: "dGhlIHNhbXBsZSBub25jZQ==", connection: "Upgrade", upgrade: "websocket")
            // The socket closes as soon as the 101 is read: no WebSocket close frame, no BLIP message.
            let head = try await ListenerHandshakeLayoutTests.exchange(port: gateway.port, request: request)
            #expect(head.hasPrefix("HTTP/1.1 101"))
            try await eventually("the drop to be counted") { counters.errors(of: .network) == 1 }
            try await eventually("the dropped session to end") {
                await gateway.listener.status().activeConnections == 0
            }
            #expect(counters.errors(of: .network) == 1)
            #expect(counters.errors(of: .protocol) == 0)
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
                #expect(
                    closeFrame?.reason?.contains("exceeds the limit of \(limit)") == true,
                    "\(String(describing: closeFrame))")
                // Counted as the listener's side of the connection ends, which may be just after the close frame.
                let counters = try #require(gateway.listener.databaseReplicationCounters["db"])
                try await eventually("the oversized message counted as a protocol error") {
                    counters.errors(of: .protocol) > 0
                }
                #expect(counters.errors(of: .protocol) == 1)
                #expect(counters.errors(of: .network) == 0)
                try await Self.expectAnswered(by: bystander)
            }
        }
    }
}

/// When a client sent its frames, to tell a listener that closed too early from a client that was starved.
actor SendTimes {
    private var times: [ContinuousClock.Instant] = []

    func mark() {
        times.append(.now)
    }

    func longestGap(until end: ContinuousClock.Instant) -> Duration {
        zip(times, times.dropFirst() + [end]).map { $1 - $0 }.max() ?? .zero
    }
}
