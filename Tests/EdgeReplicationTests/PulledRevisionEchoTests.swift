import EdgeGatewayTestSupport
import EdgeStore
import Foundation
import ReplicationProtocol
import SyncIdentifiers
import Testing

@testable import EdgeReplication

/// A gateway that pulls from an upstream must not propose those revisions back to it (LiteCore's pusher leaves out
/// a document whose current revision is the one the remote has). Two in-process gateways over loopback: the edge
/// runs a listener for LAN clients and a continuous push-and-pull replicator to the hub; the hub counts every
/// revision proposed to it.
@Suite("Pulled revisions are not pushed back to their upstream")
struct PulledRevisionEchoTests {
    static let pulledCount = 100

    @Test("pulled revisions are never proposed back; local edits and LAN clients' revisions still go up")
    func noEcho() async throws {
        try await TestGateway.run { hub in
            let hubDatabase = try await hub.database
            let hubCounters = try #require(hub.listener.databaseReplicationCounters[TestGateway.databaseName])
            let pulled = try await saveDocuments(Self.pulledCount, prefix: "up", in: hubDatabase)
            try await TestGateway.run { edge in
                let edgeDatabase = try await edge.database
                let replicator = ActiveReplicator(
                    database: edgeDatabase,
                    configuration: .init(
                        remoteURL: "ws://127.0.0.1:\(hub.port)/\(TestGateway.databaseName)", remoteUUID: "hub",
                        direction: .pushAndPull, continuous: true,
                        subprotocols: ReplicationSubprotocol.revisionTreeOffer),
                    logger: testLogger)
                let running = Task { try await replicator.run() }
                defer { running.cancel() }

                try await eventually("the hub's documents to arrive at the edge") {
                    try await currentRevisions(of: pulled.keys, in: edgeDatabase) == pulled
                }
                try await Self.waitUntilPushed(everythingIn: edgeDatabase, by: replicator)
                #expect(hubCounters.revisionsProposed == 0, "pulled revisions were proposed back to the hub")
                #expect(try await replicator.pendingDocumentIDs().isEmpty)

                // Changed on the hub after the pull: pulled again, and again not proposed back.
                let changedUpstream = try await hubDatabase.save(
                    "up-1", body: Data(#"{"n":1,"changed":"upstream"}"#.utf8), parentRevID: pulled["up-1"])
                try await eventually("the hub's change to arrive at the edge") {
                    try await edgeDatabase.document("up-1")?.revID == changedUpstream.revID
                }
                // Changed at the edge after the pull: pushed, on top of the revision the hub has.
                let changedAtEdge = try await edgeDatabase.save(
                    "up-0", body: Data(#"{"n":0,"changed":"edge"}"#.utf8), parentRevID: pulled["up-0"])
                // Pushed by a LAN client to the edge's listener: pushed on to the hub.
                let lan = try await Self.pushFromLANClient(documents: 5, to: edge)

                try await eventually("the edge's change to reach the hub") {
                    try await hubDatabase.document("up-0")?.revID == changedAtEdge.revID
                }
                try await eventually("the LAN client's documents to reach the hub") {
                    try await currentRevisions(of: lan.keys, in: hubDatabase) == lan
                }
                try await Self.waitUntilPushed(everythingIn: edgeDatabase, by: replicator)
                #expect(
                    hubCounters.revisionsProposed == 1 + lan.count,
                    "only the edge's own change and the LAN client's documents go up")
                #expect(replicator.counters.revisionsProposed == 1 + lan.count)
                #expect(hubCounters.conflicts == 0)
                #expect(replicator.counters.conflicts == 0)
                #expect(replicator.counters.documentsPulled == Self.pulledCount + 1)
                #expect(try await hubDatabase.document("up-1")?.revID == changedUpstream.revID)
                #expect(try await edgeDatabase.document("up-0")?.revID == changedAtEdge.revID)
                running.cancel()
                try await running.value
            }
        }
    }

    @Test("a pulled document edited twice is proposed once, on top of the pulled revision, with the history after it")
    func editedTwiceAfterPull() async throws {
        try await TestGateway.run { hub in
            let hubDatabase = try await hub.database
            let hubCounters = try #require(hub.listener.databaseReplicationCounters[TestGateway.databaseName])
            let pulled = try await hubDatabase.save("doc", body: Data(#"{"n":1}"#.utf8), parentRevID: nil).revID
            try await LocalDatabase.run { local in
                let status = try await local.replicate(with: hub, .pull)
                #expect(status.lastError == nil)
                var revision = pulled
                for n in 2...3 {
                    revision = try await local.database.save(
                        "doc", body: Data(#"{"n":\#(n)}"#.utf8), parentRevID: revision
                    ).revID
                }
                let pushed = try await local.replicate(with: hub, .push)
                #expect(pushed.lastError == nil)
                // Guessing the parent (generation 2) would have cost a 409 and a second proposal.
                #expect(hubCounters.revisionsProposed == 1)
                #expect(hubCounters.conflicts == 0)
                #expect(try await hubDatabase.document("doc")?.revID == revision)
                #expect(
                    try await hubDatabase.revisionHistory("doc", revID: revision)
                        == local.database.revisionHistory("doc", revID: revision))
            }
        }
    }

    /// Waits until the replicator's push has gone past every local change, proposing it or leaving it out.
    static func waitUntilPushed(everythingIn database: DocumentDatabase, by replicator: ActiveReplicator) async throws {
        let last = try await database.lastSequence()
        try await eventually("the push to go past sequence \(last)") {
            guard let session = await replicator.activeSession else { return false }
            return await session.checkpointer.current.local >= UInt64(last)
        }
    }

    /// A Couchbase Lite-like client pushes `documents` new documents to the gateway's listener, once.
    static func pushFromLANClient(documents: Int, to gateway: TestGateway) async throws -> [String: RevisionID] {
        var saved: [String: RevisionID] = [:]
        try await LocalDatabase.run { client in
            saved = try await saveDocuments(documents, prefix: "lan", in: client.database)
            let status = try await client.replicate(with: gateway, .push, remoteUUID: "edge")
            #expect(status.completed == documents)
        }
        return saved
    }
}
