import BLIPConnection
import EdgeGatewayTestSupport
import EdgeStore
import Foundation
import ReplicationProtocol
import SyncIdentifiers
import Synchronization
import Testing
import UpstreamStandIns
import VersionVectors

@testable import EdgeReplication

/// The active replicator over CBMobile_4 (issue 30): versions cross every hop unchanged, conflicts converge by
/// Couchbase Lite 4's rule, and the protocol follows the `protocol` setting and the server's answer.
@Suite("Active replicator over CBMobile_4 (version vectors)")
struct VersionVectorUpstreamTests {
    static let versionVectors = ReplicationSubprotocol.versionVectorOffer

    /// A replicator of `local` for the stand-in server on `port`, offering what `local` offers.
    static func replicator(
        of local: LocalDatabase, toStandInAt port: Int, _ direction: ActiveReplicator.Direction,
        heartbeat: Duration? = nil
    ) -> ActiveReplicator {
        ActiveReplicator(
            database: local.database,
            configuration: .init(
                remoteURL: "ws://127.0.0.1:\(port)/db", remoteUUID: "stand-in", direction: direction,
                heartbeat: heartbeat, subprotocols: local.subprotocols),
            logger: testLogger)
    }

    /// The current version of each document, nil where it is missing or legacy.
    static func currentVersions(
        of docIDs: some Sequence<String>, in database: DocumentDatabase
    ) async throws -> [String: Version?] {
        var versions: [String: Version?] = [:]
        for docID in docIDs {
            versions[docID] = try await database.document(docID)?.vector?.current
        }
        return versions
    }

    @Test(
        "push and pull keep every version as written: new documents, updates and deletions, over ws:// and wss://",
        arguments: ["ws", "wss"])
    func pushAndPullKeepVersions(scheme: String) async throws {
        let tls = scheme == "wss" ? try StrictUpstreamTests.proxyTLS() : nil
        defer { tls.map { try? FileManager.default.removeItem(at: $0.directory) } }
        try await TestGateway.run { gateway in
            let remote = try await gateway.database
            try await saveDocuments(4, prefix: "hub", in: remote)
            // Behind LiteCore's strict front door, which checks the upgrade as Couchbase's own listeners do.
            try await StrictUpgradeProxy.run(backendPort: gateway.port, options: .init(frontTLS: tls?.server)) {
                port, proxy in
                try await LocalDatabase.run(speaking: Self.versionVectors) { local in
                    let written = try await saveDocuments(6, prefix: "edge", in: local.database)
                    try await local.database.save(
                        "edge-0", body: Data(#"{"n":0,"edited":true}"#.utf8), parentRevID: written["edge-0"])
                    try await local.database.delete("edge-1", parentRevID: written["edge-1"]!)
                    let configuration = ActiveReplicator.Configuration(
                        remoteURL: "\(scheme)://127.0.0.1:\(port)/db", remoteUUID: "hub", direction: .pushAndPull,
                        tls: tls?.pin, subprotocols: Self.versionVectors)
                    let replicator = ActiveReplicator(
                        database: local.database, configuration: configuration, logger: testLogger)
                    try await replicator.run()
                    let status = await replicator.status()
                    #expect(status.subprotocol == .cbMobile4)
                    #expect(status.lastError == nil)

                    let docIDs = (0..<6).map { "edge-\($0)" } + (0..<4).map { "hub-\($0)" }
                    let here = try await Self.currentVersions(of: docIDs, in: local.database)
                    let there = try await Self.currentVersions(of: docIDs, in: remote)
                    #expect(here == there)
                    #expect(here.values.allSatisfy { $0 != nil })
                    // Written here, so written by this database's source on both sides: nothing was re-minted.
                    let source = try #require(here["edge-0"]??.source)
                    #expect(try await remote.document("edge-0")?.vector?.current.source == source)
                    #expect(try await remote.document("edge-1")?.deleted == true)
                    #expect(try await remote.document("edge-0")?.body == Data(#"{"n":0,"edited":true}"#.utf8))
                    // Pulled from the hub: its own versions, with its source.
                    #expect(try await local.database.document("hub-3")?.vector?.current.source != source)

                    // A second run finds nothing to move either way: the checkpoints hold, and pulled versions
                    // are not proposed back.
                    let again = ActiveReplicator(
                        database: local.database, configuration: configuration, logger: testLogger)
                    try await again.run()
                    #expect(again.counters.revisionsProposed == 0)
                    #expect(again.counters.documentsPulled == 0)
                }
                #expect(proxy.refusals == 0)
            }
        }
    }

    @Test("auto picks CBMobile_4 from a gateway and CBMobile_3 from a server that only speaks that")
    func autoFollowsTheServer() async throws {
        try await TestGateway.run { gateway in
            try await LocalDatabase.run(speaking: ReplicationSubprotocol.activeOffer) { local in
                try await saveDocuments(2, prefix: "a", in: local.database)
                let status = try await local.replicate(with: gateway, .push)
                #expect(status.subprotocol == .cbMobile4)
                #expect(status.completed == 2)
            }
        }
        try await ScriptedUpgradeServer.run(answer: .upgrade(subprotocol: "BLIP_3+CBMobile_3")) { port in
            try await LocalDatabase.run(speaking: ReplicationSubprotocol.activeOffer) { local in
                // The stand-in stays silent after the upgrade: missed heartbeats end the run once it is cancelled.
                let replicator = Self.replicator(of: local, toStandInAt: port, .push, heartbeat: .seconds(1))
                let running = Task { try await replicator.run() }
                try await eventually("the connection to open") { await replicator.status().subprotocol != nil }
                #expect(await replicator.status().subprotocol == .cbMobile3)
                running.cancel()
                _ = await running.result
            }
        }
    }

    @Test("a server that answers a subprotocol not offered stops the upstream with the protocol setting to change")
    func mismatchNamesTheSetting() async throws {
        try await ScriptedUpgradeServer.run(answer: .upgrade(subprotocol: "BLIP_3+CBMobile_3")) { port in
            try await LocalDatabase.run(speaking: Self.versionVectors) { local in
                let replicator = Self.replicator(of: local, toStandInAt: port, .push)
                do {
                    try await replicator.run()
                    Issue.record("the replication succeeded")
                } catch let error as ActiveReplicatorError {
                    guard case .incompatibleProtocol = error else {
                        Issue.record("unexpected error \(error)")
                        return
                    }
                    #expect("\(error)".contains("the upstream chose BLIP_3+CBMobile_3, which was not offered"))
                    #expect("\(error)".contains(#"set the upstream's protocol to "3""#))
                    #expect(ReplicationErrorKind(classifying: error) == .protocol)
                }
            }
        }
    }

    @Test("concurrent edits converge by Couchbase Lite 4's rule: the later version wins, a deletion wins over both")
    func conflictsConverge() async throws {
        try await TestGateway.run { gateway in
            let remote = try await gateway.database
            try await LocalDatabase.run(speaking: Self.versionVectors) { local in
                for docID in ["later-here", "later-there", "deleted-there"] {
                    try await local.database.save(docID, body: Data(#"{"v":0}"#.utf8), parentRevID: nil)
                }
                try await local.replicate(with: gateway, .push)
                let base = try await currentRevisions(
                    of: ["later-here", "later-there", "deleted-there"], in: local.database)
                let baseThere = try await currentRevisions(
                    of: ["later-here", "later-there", "deleted-there"], in: remote)

                try await remote.save(
                    "later-here", body: Data(#"{"v":"hub"}"#.utf8), parentRevID: baseThere["later-here"])
                try await local.database.save(
                    "later-here", body: Data(#"{"v":"edge"}"#.utf8), parentRevID: base["later-here"])
                try await local.database.save(
                    "later-there", body: Data(#"{"v":"edge"}"#.utf8), parentRevID: base["later-there"])
                try await remote.save(
                    "later-there", body: Data(#"{"v":"hub"}"#.utf8), parentRevID: baseThere["later-there"])
                try await local.database.save(
                    "deleted-there", body: Data(#"{"v":"edge"}"#.utf8), parentRevID: base["deleted-there"])
                try await remote.delete("deleted-there", parentRevID: baseThere["deleted-there"]!)

                // The push meets three conflicts; the pull resolves them; the next push sends the winners that are
                // new to the hub.
                let first = try await local.replicate(with: gateway, .pushAndPull)
                #expect(first.subprotocol == .cbMobile4)
                try await local.replicate(with: gateway, .pushAndPull)

                let docIDs = ["later-here", "later-there", "deleted-there"]
                let here = try await Self.currentVersions(of: docIDs, in: local.database)
                #expect(here == (try await Self.currentVersions(of: docIDs, in: remote)))
                #expect(try await local.database.document("later-here")?.body == Data(#"{"v":"edge"}"#.utf8))
                #expect(try await remote.document("later-here")?.body == Data(#"{"v":"edge"}"#.utf8))
                #expect(try await local.database.document("later-there")?.body == Data(#"{"v":"hub"}"#.utf8))
                #expect(try await remote.document("later-there")?.body == Data(#"{"v":"hub"}"#.utf8))
                #expect(try await local.database.document("deleted-there")?.deleted == true)
                #expect(try await remote.document("deleted-there")?.deleted == true)
                // No open conflict is left on either side.
                for docID in docIDs {
                    #expect(try await local.database.leafRevisions(docID).count == 1)
                    #expect(try await remote.leafRevisions(docID).count == 1)
                }
            }
        }
    }

    /// Device → gateway A → gateway B → device, each hop over CBMobile_4: the version a device wrote arrives at
    /// the far device with its current version and source unchanged; concurrent edits at both ends end with one
    /// winner everywhere.
    @Test("three hops keep the current version and its source; concurrent edits at both ends converge")
    func threeHops() async throws {
        try await TestGateway.run { hubGateway in
            let hub = try await hubGateway.database
            try await TestGateway.run { edgeGateway in
                let edge = try await edgeGateway.database
                let upstream = ActiveReplicator.Configuration(
                    remoteURL: "ws://127.0.0.1:\(hubGateway.port)/\(TestGateway.databaseName)", remoteUUID: "hub",
                    direction: .pushAndPull, subprotocols: Self.versionVectors)
                try await LocalDatabase.run(speaking: Self.versionVectors) { near in
                    try await LocalDatabase.run(speaking: Self.versionVectors) { far in
                        func syncAll() async throws {
                            try await near.replicate(with: edgeGateway, .pushAndPull)
                            try await ActiveReplicator(database: edge, configuration: upstream, logger: testLogger)
                                .run()
                            try await far.replicate(with: hubGateway, .pushAndPull)
                            try await ActiveReplicator(database: edge, configuration: upstream, logger: testLogger)
                                .run()
                            try await near.replicate(with: edgeGateway, .pushAndPull)
                        }
                        let written = try await near.database.save(
                            "order-1", body: Data(#"{"qty":1}"#.utf8), parentRevID: nil)
                        try await syncAll()
                        let version = try #require(try await near.database.document("order-1")?.vector?.current)
                        for database in [edge, hub, far.database] {
                            #expect(try await database.document("order-1")?.vector?.current == version)
                        }

                        // Both ends edit the same document before the next sync; the far one later.
                        let nearEdit = try await near.database.save(
                            "order-1", body: Data(#"{"qty":2}"#.utf8), parentRevID: written.revID)
                        _ = nearEdit
                        let farCurrent = try #require(try await far.database.document("order-1"))
                        try await far.database.save(
                            "order-1", body: Data(#"{"qty":3}"#.utf8), parentRevID: farCurrent.revID)
                        try await syncAll()
                        try await syncAll()
                        let winner = try #require(try await far.database.document("order-1"))
                        #expect(winner.body == Data(#"{"qty":3}"#.utf8))
                        for database in [near.database, edge, hub] {
                            let document = try #require(try await database.document("order-1"))
                            #expect(document.body == winner.body)
                            #expect(document.vector?.current == winner.vector?.current)
                            #expect(try await database.leafRevisions("order-1").count == 1)
                        }
                    }
                }
            }
        }
    }

    @Test("one database with a CBMobile_3 and a CBMobile_4 upstream: writes on each side reach all three")
    func mixedUpstreamsConverge() async throws {
        try await TestGateway.run { treeGateway in
            let treeHub = try await treeGateway.database
            try await TestGateway.run { vectorGateway in
                let vectorHub = try await vectorGateway.database
                try await LocalDatabase.run { local in
                    func syncBoth() async throws {
                        try await local.replicate(with: treeGateway, .pushAndPull, remoteUUID: "tree-hub") {
                            $0.subprotocols = ReplicationSubprotocol.revisionTreeOffer
                        }
                        try await local.replicate(with: vectorGateway, .pushAndPull, remoteUUID: "vector-hub") {
                            $0.subprotocols = Self.versionVectors
                        }
                    }
                    try await saveDocuments(3, prefix: "tree", in: treeHub)
                    try await saveDocuments(3, prefix: "vector", in: vectorHub)
                    try await saveDocuments(3, prefix: "local", in: local.database)
                    try await syncBoth()
                    try await syncBoth()
                    // Updates on each hub travel through the local database to the other.
                    let treeDoc = try #require(try await treeHub.document("vector-0"))
                    try await treeHub.save(
                        "vector-0", body: Data(#"{"edited":"tree"}"#.utf8), parentRevID: treeDoc.revID)
                    let vectorDoc = try #require(try await vectorHub.document("tree-1"))
                    try await vectorHub.save(
                        "tree-1", body: Data(#"{"edited":"vector"}"#.utf8), parentRevID: vectorDoc.revID)
                    try await syncBoth()
                    try await syncBoth()
                    let docIDs = ["tree", "vector", "local"].flatMap { prefix in (0..<3).map { "\(prefix)-\($0)" } }
                    for docID in docIDs {
                        let body = try await local.database.document(docID)?.body
                        #expect(body != nil, "\(docID) is missing locally")
                        #expect(try await treeHub.document(docID)?.body == body, "\(docID) on the CBMobile_3 hub")
                        #expect(try await vectorHub.document(docID)?.body == body, "\(docID) on the CBMobile_4 hub")
                    }
                    #expect(try await vectorHub.document("vector-0")?.body == Data(#"{"edited":"tree"}"#.utf8))
                    #expect(try await treeHub.document("tree-1")?.body == Data(#"{"edited":"vector"}"#.utf8))
                    // What crossed the CBMobile_4 hop kept its version.
                    #expect(
                        try await vectorHub.document("local-0")?.vector?.current
                            == (try await local.database.document("local-0")?.vector?.current))
                }
            }
        }
    }

    @Test("a continuous CBMobile_4 replication follows later changes both ways and proposes nothing back")
    func continuous() async throws {
        try await TestGateway.run { gateway in
            let remote = try await gateway.database
            let hubCounters = try #require(gateway.listener.databaseReplicationCounters[TestGateway.databaseName])
            try await LocalDatabase.run(speaking: Self.versionVectors) { local in
                let replicator = local.makeReplicator(with: gateway, .pushAndPull) { $0.continuous = true }
                let running = Task { try await replicator.run() }
                defer { running.cancel() }
                try await eventually("the replicator to become idle") { await replicator.status().activity == .idle }
                let down = try await saveDocuments(2, prefix: "down", in: local.database)
                try await eventually("the edge's documents to arrive") {
                    try await Self.currentVersions(of: down.keys, in: remote)
                        == (try await Self.currentVersions(of: down.keys, in: local.database))
                }
                try await eventually("the replicator to become idle") { await replicator.status().activity == .idle }
                // As LiteCore 4 does, the listener does not offer a client's pushed revisions back to it.
                #expect(await replicator.newestRemoteSequence == nil, "the pushed documents were offered back")

                let up = try await saveDocuments(3, prefix: "up", in: remote)
                try await eventually("the hub's documents to arrive") {
                    try await Self.currentVersions(of: up.keys, in: local.database)
                        == (try await Self.currentVersions(of: up.keys, in: remote))
                }
                try await eventually("the replicator to become idle") { await replicator.status().activity == .idle }
                #expect(await replicator.newestRemoteSequence == 5)
                #expect(hubCounters.revisionsProposed == 2, "only the edge's own documents are proposed")
                running.cancel()
                try await running.value
            }
        }
    }

    @Test("a pulled update arrives as a delta against the version this side lists, and a pushed blob is fetched")
    func deltasAndBlobs() async throws {
        try await TestGateway.run { gateway in
            let remote = try await gateway.database
            let first = try await remote.save(
                "doc", body: Data(#"{"filler":"\#(deltaFiller)","count":1}"#.utf8), parentRevID: nil)
            let base = try #require(try await remote.document("doc")?.vector)
            try await remote.save(
                "doc", body: Data(#"{"filler":"\#(deltaFiller)","count":2}"#.utf8), parentRevID: first.revID)
            try await LocalDatabase.run(speaking: Self.versionVectors) { local in
                // The local copy of the base version carries a marker the upstream's lacks: only a delta applied to
                // it (not a whole body) can bring the marker into the pulled version.
                _ = try await local.database.insertVersionedRevisions([
                    VersionedRevision(
                        docID: "doc", vector: base,
                        body: Data(#"{"filler":"\#(deltaFiller)","count":1,"marker":true}"#.utf8))
                ])
                let content = Data((0..<50_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
                let digest = try local.database.blobs.write(content)
                try await local.database.save(
                    "photo",
                    body: Data(
                        #"{"image":{"@type":"blob","digest":"\#(digest)","length":50000,"content_type":"image/png"}}"#
                            .utf8),
                    parentRevID: nil)

                let status = try await local.replicate(with: gateway, .pushAndPull)
                #expect(status.lastError == nil)
                #expect(status.subprotocol == .cbMobile4)
                let document = try #require(try await local.database.document("doc"))
                #expect(document.vector?.current == (try await remote.document("doc")?.vector?.current))
                #expect(
                    try object(document.body)
                        == ["filler": .string(deltaFiller), "count": .integer(2), "marker": .bool(true)])
                #expect(try remote.blobs.read(digest) == content)
                #expect(
                    try await remote.document("photo")?.vector?.current
                        == (try await local.database.document("photo")?.vector?.current))
            }
        }
    }

    /// LiteCore 4 has no legacy mode: a `getCheckpoint` without `collection` gets 400 "inappropriate use of the
    /// collection property." (WIRE-NOTES §2). The replicator then opens the default collection with
    /// `getCollections` on the same connection, as Couchbase Lite 4 always does.
    @Test("a peer that refuses legacy mode gets getCollections on the same connection")
    func legacyModeRefused() async throws {
        let requests = Mutex<[String]>([])
        try await ScriptedUpstream.run(configure: { connection in
            await connection.setHandler(for: Profile.getCheckpoint.rawValue) { _ in
                throw ErrorReply.http(400, "inappropriate use of the collection property.").blipError
            }
            await connection.setHandler(for: Profile.getCollections.rawValue) { request in
                requests.withLock { $0.append("getCollections") }
                return request.reply(body: Array("[{}]".utf8))
            }
            await connection.setHandler(for: Profile.subChanges.rawValue) { request in
                requests.withLock { $0.append("subChanges collection \(request.properties["collection"] ?? "-")") }
                Task {
                    let caughtUp = ChangesRequest(rows: [], collection: 0)
                    try await connection.sendNoReply(.request(caughtUp, isUrgent: true, isNoReply: true))
                }
                return request.reply()
            }
        }) { port in
            try await LocalDatabase.run { local in
                let replicator = Self.replicator(of: local, toStandInAt: port, .pull)
                try await replicator.run()
                #expect(await replicator.status().lastError == nil)
            }
        }
        // getCollections came, then a subChanges that names collection 0.
        #expect(requests.withLock { $0 } == ["getCollections", "subChanges collection 0"])
    }

    /// A version-vector LiteCore answers a rev-tree `subChanges` with LiteCore 501 (WIRE-NOTES §3): retrying cannot
    /// help, so the upstream stops and says which setting fits.
    @Test("a 501 to subChanges stops the pull with the protocol setting to change")
    func versioningRefused() async throws {
        try await ScriptedUpstream.run(configure: { connection in
            await connection.setHandler(for: Profile.subChanges.rawValue) { _ in
                throw ErrorReply.liteCore(501, "Incompatible document versioning.").blipError
            }
        }) { port in
            try await LocalDatabase.run { local in
                let replicator = Self.replicator(of: local, toStandInAt: port, .pull)
                await #expect(throws: ActiveReplicatorError.self) { try await replicator.run() }
                let error = try #require(await replicator.status().lastError)
                #expect(error.contains("refused the pull's document versioning"), "\(error)")
                #expect(error.contains("Incompatible document versioning."), "\(error)")
                #expect(error.contains(#"protocol to "3""#), "\(error)")
            }
        }
    }

    @Test("document_ids limits push and pull over CBMobile_4 to those documents")
    func documentIDFilter() async throws {
        try await TestGateway.run { gateway in
            let remote = try await gateway.database
            try await saveDocuments(3, prefix: "hub", in: remote)
            try await LocalDatabase.run(speaking: Self.versionVectors) { local in
                try await saveDocuments(3, prefix: "edge", in: local.database)
                let status = try await local.replicate(with: gateway, .pushAndPull) {
                    $0.documentIDs = ["edge-1", "hub-2"]
                }
                #expect(status.subprotocol == .cbMobile4)
                #expect(status.lastError == nil)
                #expect(try await remote.document("edge-1") != nil)
                #expect(try await remote.document("edge-0") == nil)
                #expect(try await remote.document("edge-2") == nil)
                #expect(try await local.database.document("hub-2") != nil)
                #expect(try await local.database.document("hub-0") == nil)
                #expect(try await local.database.document("hub-1") == nil)
            }
        }
    }
}
