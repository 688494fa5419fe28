import EdgeGatewayTestSupport
import Foundation
import ReplicationProtocol
import Testing
import UpstreamDialer

@testable import SyncListener

/// A device the listener cannot serve is said so: at notice level in the log, with the peer, its user-agent,
/// what it offered and a hint, and on the listener's status (which the status page and the metrics read).
@Suite("Devices turned away: logged, counted and shown with a hint")
struct TurnedAwayClientTests {
    @Test("no common subprotocol: 403, and the offer, the user-agent and a hint that fits are kept and logged")
    func noCommonSubprotocol() async throws {
        let log = LogRecorder()
        try await TestGateway.run(logger: log.logger(level: .info)) { gateway in
            let cases: [(offer: String, hint: String)] = [
                ("BLIP_3+CBMobile_5", "newer than this gateway speaks"),
                ("BLIP_3+CBMobile_1", "older than this gateway speaks"),
                ("chat,superchat", "not a Couchbase Lite replicator"),
            ]
            for (offer, _) in cases {
                let dialer = try TestGateway.dialer(
                    port: gateway.port, subprotocols: offer.split(separator: ",").map(String.init),
                    userAgent: "CouchbaseLite/9.9.9 (\"<phone>\")")
                let refusal = await ListenerUpgradeTests.refusal(of: dialer)
                #expect(refusal?.status == 403)
            }
            let status = await gateway.listener.status()
            #expect(status.turnedAwayCounts[.noCommonSubprotocol] == cases.count)
            #expect(status.turnedAway.count == cases.count)
            for (client, expected) in zip(status.turnedAway, cases) {
                #expect(client.reason == .noCommonSubprotocol)
                #expect(client.offered == expected.offer)
                #expect(client.userAgent == "CouchbaseLite/9.9.9 (\"<phone>\")")
                #expect(client.peer.hasPrefix("127.0.0.1:"))
                #expect(client.hint.contains(expected.hint), "\(client.hint)")
            }
            let notices = log.all.filter { $0.hasPrefix("notice turned away a replication client") }
            #expect(notices.count == cases.count)
            #expect(notices.first?.contains("offered=BLIP_3+CBMobile_5") == true)
            #expect(notices.first?.contains("user_agent=CouchbaseLite/9.9.9") == true)
            #expect(notices.first?.contains("hint=") == true)
        }
    }

    @Test("a pull asking for the other versioning: LiteCore's 501, and the refusal is kept and logged")
    func incompatibleVersioning() async throws {
        let log = LogRecorder()
        try await TestGateway.run(logger: log.logger(level: .info)) { gateway in
            try await ActivePeer.connect(port: gateway.port) { peer in
                let refusal = try await peer.errorReply(for: SubChangesRequest(versioning: .versionVectors))
                #expect(refusal?.code == 501)
            }
            let status = await gateway.listener.status()
            #expect(status.turnedAwayCounts[.incompatibleVersioning] == 1)
            let client = try #require(status.turnedAway.last)
            #expect(client.reason == .incompatibleVersioning)
            #expect(client.offered == "BLIP_3+CBMobile_3, versioning version-vectors")
            #expect(client.hint.contains("Couchbase Lite 4"))
            #expect(log.all.contains { $0.hasPrefix("notice turned away a pull: incompatible document versioning") })
        }
    }

    @Test("only the last few are kept; the count goes on")
    func keepsTheLastFew() async throws {
        try await TestGateway.run { gateway in
            for _ in 0..<(TurnedAwayClient.kept + 2) {
                _ = await ListenerUpgradeTests.refusal(
                    of: try TestGateway.dialer(port: gateway.port, subprotocols: ["BLIP_3+CBMobile_7"]))
            }
            let status = await gateway.listener.status()
            #expect(status.turnedAway.count == TurnedAwayClient.kept)
            #expect(status.turnedAwayCounts[.noCommonSubprotocol] == TurnedAwayClient.kept + 2)
        }
    }
}
