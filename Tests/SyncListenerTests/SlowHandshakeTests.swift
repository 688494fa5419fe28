import EdgeConfig
import EdgeGatewayTestSupport
import Foundation
import NIOSSL
import Synchronization
import Testing

@testable import SyncListener

/// Slowloris and password floods: a client that trickles its handshake is closed at the handshake deadline and
/// never holds a replication slot; a flood of Basic-auth guesses runs at most the gate's number of scrypt
/// derivations at once and gets 503 beyond its queue; and neither the deadline nor the queue cuts off a client
/// that has sent its request and waits for the node.
@Suite("Hostile input: slow handshakes and password floods")
struct SlowHandshakeTests {
    final class Counter: Sendable {
        let value = Atomic<Int>(0)
    }

    /// `bytes`, one byte per chunk: sent 200 ms apart, they keep the idle timeout at bay for as long as they last.
    static func trickled(_ bytes: [UInt8]) -> [[UInt8]] { bytes.map { [$0] } }

    /// Occupies every slot of the listener's verification gate until `release` is signalled once per slot.
    static func occupy(_ gate: PasswordVerificationGate, release: DispatchSemaphore) async throws -> [Task<
        Void?, Never
    >] {
        let slots = gate.limit.concurrent
        let holders = (0..<slots).map { _ in
            Task { await gate.verify { _ = release.wait(timeout: .now() + 60) } }
        }
        while await gate.mostConcurrent < slots {
            try await Task.sleep(for: .milliseconds(10))
        }
        return holders
    }

    /// A wrong Basic password on a REST route while the gate is full: 503, in Sync Gateway's error shape.
    static func expectRESTGuessRefused(port: Int) async throws {
        let exchange = try await RawExchange.run(
            port: port,
            chunks: HostileInputTests.get("/db/_all_docs", headers: HostileInputTests.basic("alice:rest-guess")),
            quietFor: .seconds(10))
        #expect(exchange.status == 503, "\(exchange.head)")
        #expect(String(decoding: exchange.received, as: UTF8.self).contains("\"reason\":"), "\(exchange.head)")
    }

    @Test(
        "clients trickling their request head or TLS ClientHello are closed at the handshake deadline; a real client replicates meanwhile",
        arguments: [ListenerTLS.off, .selfSigned])
    func slowHandshakesAreClosed(tls: ListenerTLS) async throws {
        // 60 bytes 200 ms apart would take 12 s: a close long before that is the 1 s deadline's.
        let trickle: [UInt8] =
            tls == .off
            ? Array("GET /db/_blipsync HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nX-Slow: 1234".utf8)
            // A TLS handshake record announcing 512 bytes, which never all arrive in time.
            : [0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xFC, 0x03, 0x03] + Array(repeating: 0x5A, count: 60)
        let chunks = Self.trickled(Array(trickle.prefix(60)))
        try await TestGateway.run(
            settings: TestGateway.settings(tls: tls, maxConnections: 2), handshakeTimeout: .seconds(1)
        ) { gateway in
            let slow = (0..<6).map { _ in
                Task {
                    try await RawExchange.run(
                        port: gateway.port, chunks: chunks, pause: .milliseconds(200), quietFor: .seconds(20))
                }
            }
            var clientTLS = TLSConfiguration.makeClientConfiguration()
            clientTLS.certificateVerification = .none
            try await ActivePeer.connect(port: gateway.port, tls: tls == .off ? nil : clientTLS) { peer in
                try await ListenerResourceLimitTests.expectAnswered(by: peer)
            }
            for task in slow {
                let exchange = try await task.value
                #expect(exchange.closedByServer, "a slow client was left open")
                #expect(
                    exchange.bytesSent < chunks.count, "the slow client sent everything: the deadline did not close it")
                #expect(exchange.status == nil, "a trickled head was answered: \(exchange.head)")
            }
            // The real client's slot is released as its channel closes, asynchronously.
            try await eventually("the real client's slot released") {
                await gateway.listener.status().activeConnections == 0
            }
        }
    }

    @Test("the handshake deadline stops at the request head: upgrades waiting for a password check are answered")
    func waitingForVerificationIsNotCut() async throws {
        try await TestGateway.run(
            settings: TestGateway.settings(authentication: TestGateway.users), handshakeTimeout: .seconds(2),
            passwordVerificationLimit: .init(concurrent: 1, waiting: 8)
        ) { gateway in
            let gate = try #require(gateway.listener.passwordVerifications)
            let release = DispatchSemaphore(value: 0)
            let holders = try await Self.occupy(gate, release: release)
            let guesses = (0..<3).map { index in
                Task {
                    try await RawExchange.run(
                        port: gateway.port,
                        chunks: HostileInputTests.upgrade(adding: HostileInputTests.basic("alice:guess-\(index)")),
                        quietFor: .seconds(30))
                }
            }
            // Twice the deadline in the queue: the node is the slow party here, not the clients.
            try await Task.sleep(for: .seconds(4))
            release.signal()
            for holder in holders { _ = await holder.value }
            for guess in guesses {
                let exchange = try await guess.value
                #expect(exchange.status == 401, "a guess that waited its turn got: \(exchange.head)")
            }
        }
    }

    @Test(
        "a flood of password guesses runs at most the gate's derivations at once, the overflow gets 503 with Retry-After; a recent login still gets in"
    )
    func passwordFlood() async throws {
        try await TestGateway.run(
            settings: TestGateway.settings(authentication: TestGateway.users),
            passwordVerificationLimit: .init(concurrent: 2, waiting: 4)
        ) { gateway in
            try await ActivePeer.connect(port: gateway.port, credentials: ("alice", "s3cret")) { bystander in
                try await ListenerResourceLimitTests.expectAnswered(by: bystander)
                let gate = try #require(gateway.listener.passwordVerifications)
                let release = DispatchSemaphore(value: 0)
                let holders = try await Self.occupy(gate, release: release)
                let answered = Counter()
                let guesses = (0..<12).map { index in
                    Task {
                        defer { answered.value.add(1, ordering: .relaxed) }
                        return try await RawExchange.run(
                            port: gateway.port,
                            chunks: HostileInputTests.upgrade(adding: HostileInputTests.basic("alice:guess-\(index)")),
                            quietFor: .seconds(30))
                    }
                }
                // With both slots taken and 4 guesses queued, the other 8 are answered at once.
                for _ in 0..<2000 where answered.value.load(ordering: .relaxed) < 8 {
                    try await Task.sleep(for: .milliseconds(10))
                }
                #expect(answered.value.load(ordering: .relaxed) == 8)
                // The REST API shares the gate: a guess there gets the same 503, in Sync Gateway's error shape.
                try await Self.expectRESTGuessRefused(port: gateway.port)
                // Credentials checked a moment ago are answered from the cache, without a slot.
                try await ActivePeer.connect(port: gateway.port, credentials: ("alice", "s3cret")) { peer in
                    try await ListenerResourceLimitTests.expectAnswered(by: peer)
                }
                try await ListenerResourceLimitTests.expectAnswered(by: bystander)
                for _ in holders { release.signal() }
                for holder in holders { _ = await holder.value }

                var statuses: [Int: Int] = [:]
                for guess in guesses {
                    let exchange = try await guess.value
                    statuses[exchange.status ?? 0, default: 0] += 1
                    #expect(exchange.closedByServer)
                    if exchange.status == 503 {
                        #expect(exchange.head.lowercased().contains("retry-after: 1"), "\(exchange.head)")
                    }
                }
                #expect(statuses == [503: 8, 401: 4], "\(statuses)")
                #expect(await gate.mostConcurrent == 2)
                try await ListenerResourceLimitTests.expectAnswered(by: bystander)
            }
        }
    }
}
