import BLIPCodec
import BLIPConnection
import EdgeConfig
import EdgeGatewayTestSupport
import Foundation
import HummingbirdWSClient
import ReplicationProtocol
import SyncListener
import Testing
import UpstreamDialer

/// The listener as a real Couchbase Lite client meets it: proper WebSocket upgrade requests (key, version,
/// subprotocol offer), refused with the status, headers and body Couchbase Lite acts on, and accepted no more
/// often than the connection limit allows.
@Suite("The sync listener's WebSocket upgrade and limits")
struct ListenerUpgradeTests {
    /// The refusal a dial ends with, or `nil` (recorded as an issue) when it did not end with one.
    static func refusal(
        of dialer: UpstreamDialer, sourceLocation: SourceLocation = #_sourceLocation
    ) async -> (status: Int, wwwAuthenticate: String?, body: String)? {
        do {
            try await dialer.run { _ in }
            Issue.record("the upgrade was accepted", sourceLocation: sourceLocation)
        } catch let UpstreamDialError.upgradeRefused(_, status, _, wwwAuthenticate, body) {
            return (status, wwwAuthenticate, body)
        } catch {
            Issue.record("expected a refused upgrade, got \(error)", sourceLocation: sourceLocation)
        }
        return nil
    }

    @Test("wrong or missing Basic credentials: 401 with WWW-Authenticate, on the upgrade itself")
    func unauthorized() async throws {
        try await TestGateway.run(settings: TestGateway.settings(authentication: TestGateway.users)) { gateway in
            for credentials in [nil, ("alice", "wrong"), ("bob", "s3cret")] as [(String, String)?] {
                let refusal = await Self.refusal(
                    of: try TestGateway.dialer(port: gateway.port, credentials: credentials))
                #expect(refusal?.status == 401)
                #expect(refusal?.wwwAuthenticate == #"Basic charset="UTF-8""#)
                #expect(refusal?.body == "Login required")
            }
            try await TestGateway.dialer(port: gateway.port, credentials: ("alice", "s3cret")).run { session in
                #expect(session.subprotocol == "BLIP_3+CBMobile_3")
            }
        }
    }

    @Test("an unknown database: 404")
    func unknownDatabase() async throws {
        try await TestGateway.run { gateway in
            let refusal = await Self.refusal(of: try TestGateway.dialer(port: gateway.port, database: "nope"))
            #expect(refusal?.status == 404)
            #expect(refusal?.wwwAuthenticate == nil)
            #expect(refusal?.body == "no database 'nope' here")
        }
    }

    @Test("a full listener: 503, which Couchbase Lite retries")
    func full() async throws {
        try await TestGateway.run(settings: TestGateway.settings(maxConnections: 1)) { gateway in
            try await ActivePeer.connect(port: gateway.port) { _ in
                let error = await dialError { try await TestGateway.dialer(port: gateway.port).run { _ in } }
                guard case .upgradeRefused(_, 503, _, nil, "Replication limit exceeded") = error else {
                    Issue.record("expected a 503 refusal, got \(String(describing: error))")
                    return
                }
                #expect(error?.isTransient == true)
            }
        }
    }

    @Test("no common subprotocol: 403 naming the ones spoken")
    func noCommonSubprotocol() async throws {
        try await TestGateway.run { gateway in
            let refusal = await Self.refusal(
                of: try TestGateway.dialer(port: gateway.port, subprotocols: ["BLIP_3+CBMobile_9"]))
            #expect(refusal?.status == 403)
            #expect(refusal?.body == ReplicationSubprotocol.mismatchMessage(supported: ReplicationSubprotocol.served))
            #expect(
                refusal?.body == "I only speak BLIP_3+CBMobile_4,BLIP_3+CBMobile_3,BLIP_3+CBMobile_2 protocols")
        }
    }

    @Test("a plain GET of _blipsync, without upgrade headers: 400")
    func plainGet() async throws {
        try await TestGateway.run { gateway in
            let response = try await ListenerTests.get("/db/_blipsync", port: gateway.port)
            #expect(response.status == 400)
            #expect(String(decoding: response.body, as: UTF8.self) == "a WebSocket upgrade is required")
        }
    }

    @Test("N+3 simultaneous upgrades against max_connections = N: exactly N open, the others get 503")
    func simultaneousUpgrades() async throws {
        let limit = 3
        let attempts = limit + 3
        try await TestGateway.run(settings: TestGateway.settings(maxConnections: limit)) { gateway in
            let outcomes = DialOutcomes()
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<attempts {
                    let dialer = try TestGateway.dialer(port: gateway.port)
                    group.addTask {
                        do {
                            try await dialer.run { _ in
                                await outcomes.record(.opened)
                                // Hold the slot until every attempt has its answer.
                                try await eventually("every attempt to finish") { await outcomes.count == attempts }
                            }
                        } catch let UpstreamDialError.upgradeRefused(_, status, _, _, _) {
                            await outcomes.record(.refused(status: status))
                        }
                    }
                }
                try await group.waitForAll()
            }
            #expect(await outcomes.opened == limit)
            #expect(await outcomes.refusals == Array(repeating: 503, count: attempts - limit))
            try await eventually("the slots to be released") {
                await gateway.listener.status().activeConnections == 0
            }
            #expect(await gateway.listener.status().totalConnections == limit)
        }
    }
}

/// What each of several simultaneous dials ended with.
actor DialOutcomes {
    enum Outcome {
        case opened
        case refused(status: Int)
    }

    private var outcomes: [Outcome] = []

    func record(_ outcome: Outcome) {
        outcomes.append(outcome)
    }

    var count: Int { outcomes.count }

    var opened: Int {
        outcomes.filter { if case .opened = $0 { true } else { false } }.count
    }

    var refusals: [Int] {
        outcomes.compactMap { if case .refused(let status) = $0 { status } else { nil } }
    }
}
