import BLIPCodec
import BLIPConnection
import EdgeGatewayTestSupport
import EdgeStore
import Foundation
import ReplicationProtocol
import SyncIdentifiers
import Testing
import VersionVectors

/// A Couchbase Lite 4.x device (CBMobile_4, version vectors) and a 3.x device (CBMobile_3, rev trees) on one
/// database with two named collections, with REST writes beside them: each one's writes reach the other in its own
/// terms, concurrent edits are refused until resolved, and in the end both devices pull the same documents.
@Suite("A mixed fleet of 3.x and 4.x devices converges on one database")
struct MixedFleetTests {
    static let phone = "W4IpzVcVScq75WMaxJ6WUA"
    static let inventory = try! CollectionName(parsing: "store.inventory")
    static let orders = try! CollectionName(parsing: "store.orders")
    static let offer4 = "BLIP_3+CBMobile_4"

    /// The phone's hybrid logical clock: like ours, at the wall clock and ahead of every version it has seen.
    final class PhoneClock: @unchecked Sendable {
        private var clock = HybridLogicalClock()
        private let lock = NSLock()

        /// A new version of the phone's, after every version in `seen`.
        func version(after seen: [Version] = []) -> String {
            lock.withLock {
                for version in seen { clock.observe(version.timestamp) }
                let timestamp = clock.next(wallClockNanoseconds: UInt64(Date().timeIntervalSince1970 * 1e9))
                return String(timestamp, radix: 16) + "@" + MixedFleetTests.phone
            }
        }
    }

    static func json(_ text: String) -> [UInt8] { Array(text.utf8) }

    /// Opens a connection that names both collections, as every 4.x client and a 3.x client with named
    /// collections does.
    static func connect(
        _ gateway: TestGateway, offering offer: String = ActivePeer.subprotocolOffer,
        configure: @escaping @Sendable (BLIPConnection) async -> Void = { _ in },
        _ body: @escaping @Sendable (ActivePeer) async throws -> Void
    ) async throws {
        try await ActivePeer.connect(port: gateway.port, offering: offer, configure: configure) { peer in
            _ = try await peer.send(
                GetCollectionsRequest(checkpointIDs: ["cp-inventory", "cp-orders"], collections: [inventory, orders]),
                expecting: GetCollectionsReply.self)
            try await body(peer)
        }
    }

    static func propose(
        _ peer: ActivePeer, _ row: ReplicationProtocol.ProposedChange, collection: Int
    ) async throws -> ProposeChangesReply.Status {
        let reply = try await peer.send(
            ProposeChangesRequest(rows: [row], collection: collection), expecting: ProposeChangesReply.self)
        return reply.status(at: 0)
    }

    /// Everything a fresh device of one generation pulls from both collections, by collection index and document.
    static func pullEverything(
        _ gateway: TestGateway, offering offer: String, versioning: SubChangesRequest.Versioning, documents: Int
    ) async throws -> [String: RevRequest] {
        let recorder = PullRecorder()
        try await connect(gateway, offering: offer, configure: { await recorder.install(on: $0) }) { peer in
            for collection in [0, 1] {
                try await peer.send(SubChangesRequest(batchSize: 200, versioning: versioning, collection: collection))
            }
            try await eventually("every document pulled") { await recorder.revisions.count == documents }
        }
        var pulled: [String: RevRequest] = [:]
        for revision in await recorder.revisions {
            pulled["\(revision.collection ?? -1)/\(revision.docID)"] = revision
        }
        return pulled
    }

    @Test("4.x and 3.x pushes, REST writes, updates across generations, refused concurrent edits, a delete and a blob")
    func mixedFleetConverges() async throws {
        let blob = Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
        let digest = BlobDigest(of: blob)
        var settings = TestGateway.settings()
        settings.restAPI = .readWrite
        try await TestGateway.run(settings: settings, collections: [Self.inventory, Self.orders]) { gateway in
            let database = try await gateway.database
            // The 4.x phone creates a document in each collection, one with a blob it serves on request.
            let phoneClock = PhoneClock()
            let phoneCreated = phoneClock.version()
            try await Self.connect(
                gateway, offering: Self.offer4,
                configure: { connection in
                    await connection.setHandler(for: "getAttachment") { request in request.reply(body: Array(blob)) }
                }
            ) { peer in
                for collection in [0, 1] {
                    let row = ReplicationProtocol.ProposedChange(
                        docID: "phone-doc", revision: try WireRevision(received: phoneCreated), bodySize: 10)
                    #expect(try await Self.propose(peer, row, collection: collection) == .accepted)
                    let body =
                        collection == 0
                        ? #"{"by":"phone","photo":{"@type":"blob","digest":"\#(digest)","length":\#(blob.count)}}"#
                        : #"{"by":"phone"}"#
                    try await peer.send(
                        RevRequest(
                            docID: "phone-doc", revision: try WireRevision(received: phoneCreated), noConflicts: true,
                            collection: collection, body: Self.json(body)))
                }
            }
            #expect(database.blobs.contains(digest))
            // The 3.x tablet creates one in each collection.
            let tabletCreated = try RevisionID("1-" + String(repeating: "a", count: 40))
            try await Self.connect(gateway) { peer in
                for collection in [0, 1] {
                    let row = ReplicationProtocol.ProposedChange(docID: "tablet-doc", revisionID: tabletCreated)
                    #expect(try await Self.propose(peer, row, collection: collection) == .accepted)
                    try await peer.send(
                        RevRequest(
                            docID: "tablet-doc", revision: .tree(tabletCreated), noConflicts: true,
                            collection: collection, body: Self.json(#"{"by":"tablet"}"#)))
                }
            }
            // A REST client writes one in the orders collection.
            let rest = RESTClient(port: gateway.port)
            #expect(try await rest.send("PUT", "/db.store.orders/rest-doc", json: ["by": "rest"]).status == 201)

            // Each generation sees the others' writes in its own terms.
            let minted = try #require(try await database.document("phone-doc", in: Self.inventory)).revID
            #expect(minted.generation == 1)
            let tabletVersion = try #require(try await database.document("tablet-doc", in: Self.inventory)?.vector)
            #expect(tabletVersion.current.source == database.versionSource)

            // The tablet updates the phone's document over the rev-tree ID minted for it; the phone updates the
            // tablet's over the version minted for it.
            let tabletUpdate = try RevisionID("2-" + String(repeating: "b", count: 40))
            try await Self.connect(gateway) { peer in
                let row = ReplicationProtocol.ProposedChange(
                    docID: "phone-doc", revisionID: tabletUpdate, remoteRevisionID: minted)
                #expect(try await Self.propose(peer, row, collection: 0) == .accepted)
                try await peer.send(
                    RevRequest(
                        docID: "phone-doc", revision: .tree(tabletUpdate), history: RevisionHistory([minted]),
                        noConflicts: true, collection: 0,
                        body: Self.json(
                            #"{"by":"tablet","photo":{"@type":"blob","digest":"\#(digest)","length":\#(blob.count)}}"#))
                )
            }
            let afterTablet = try #require(try await database.document("phone-doc", in: Self.inventory)?.vector)
            #expect(afterTablet.current.source == database.versionSource)
            #expect(afterTablet.previous.map(\.description) == [phoneCreated])

            let phoneOverTablet = "\(phoneClock.version(after: [tabletVersion.current])); \(tabletVersion.current)"
            try await Self.connect(gateway, offering: Self.offer4) { peer in
                let row = ReplicationProtocol.ProposedChange(
                    docID: "tablet-doc", revision: try WireRevision(received: phoneOverTablet),
                    remoteRevision: WireRevision(tabletVersion.current), bodySize: 10)
                #expect(try await Self.propose(peer, row, collection: 0) == .accepted)
                try await peer.send(
                    RevRequest(
                        docID: "tablet-doc", revision: try WireRevision(received: phoneOverTablet), noConflicts: true,
                        collection: 0, body: Self.json(#"{"by":"phone","over":"tablet"}"#)))

                // Concurrent: the phone edits its own document again without having seen the tablet's update.
                let concurrent = ReplicationProtocol.ProposedChange(
                    docID: "phone-doc", revision: try WireRevision(received: phoneClock.version()),
                    remoteRevision: try WireRevision(received: phoneCreated), bodySize: 10)
                #expect(
                    try await Self.propose(peer, concurrent, collection: 0)
                        == .conflict(currentRevision: WireRevision(afterTablet.current)))
                // Resolved as Couchbase Lite 4 resolves it: the phone's own version over the tablet's.
                let resolved = "\(phoneClock.version(after: [afterTablet.current])); \(afterTablet.current)"
                let row2 = ReplicationProtocol.ProposedChange(
                    docID: "phone-doc", revision: try WireRevision(received: resolved),
                    remoteRevision: WireRevision(afterTablet.current), bodySize: 10)
                #expect(try await Self.propose(peer, row2, collection: 0) == .accepted)
                try await peer.send(
                    RevRequest(
                        docID: "phone-doc", revision: try WireRevision(received: resolved), noConflicts: true,
                        collection: 0, body: Self.json(#"{"by":"phone","resolved":true}"#)))

                // And deletes the REST document over the version minted for it.
                let restVersion = try #require(try await database.document("rest-doc", in: Self.orders)?.vector)
                let deletion = "\(phoneClock.version(after: [restVersion.current])); \(restVersion.current)"
                try await peer.send(
                    RevRequest(
                        docID: "rest-doc", revision: try WireRevision(received: deletion), deleted: true,
                        noConflicts: true, collection: 1, body: Self.json("{}")))
            }
            // Concurrent on the other side: the tablet edits its own document from its first revision.
            try await Self.connect(gateway) { peer in
                let stale = ReplicationProtocol.ProposedChange(
                    docID: "tablet-doc", revisionID: try RevisionID("2-" + String(repeating: "c", count: 40)),
                    remoteRevisionID: tabletCreated)
                guard case .conflict = try await Self.propose(peer, stale, collection: 0) else {
                    Issue.record("the tablet's stale edit was not refused")
                    return
                }
            }

            // Both generations pull everything: the same documents, bodies and deletions as the store holds, each
            // named in its own terms, every revision once.
            let pulled4 = try await Self.pullEverything(
                gateway, offering: Self.offer4, versioning: .versionVectors, documents: 5)
            let pulled3 = try await Self.pullEverything(
                gateway, offering: ActivePeer.subprotocolOffer, versioning: .revisionTrees, documents: 5)
            #expect(pulled4.count == 5 && Set(pulled4.keys) == Set(pulled3.keys))
            for (key, revision4) in pulled4 {
                let collection = key.hasPrefix("0/") ? Self.inventory : Self.orders
                let stored = try #require(try await database.document(revision4.docID, in: collection))
                let revision3 = try #require(pulled3[key])
                guard case .vector(let vector) = revision4.revision else {
                    Issue.record("\(key) reached the 4.x device as \(revision4.revision)")
                    continue
                }
                #expect(vector == stored.vector, "\(key)")
                #expect(revision3.revision == .tree(stored.revID), "\(key)")
                #expect(revision4.deleted == stored.deleted && revision3.deleted == stored.deleted, "\(key)")
                #expect(try revision4.bodyObject() == revision3.bodyObject(), "\(key)")
            }
            #expect(pulled4["1/rest-doc"]?.deleted == true)
            #expect(try pulled4["0/phone-doc"]?.bodyObject()["resolved"] == true)
            #expect(try pulled3["0/tablet-doc"]?.bodyObject()["over"] == "tablet")
            // The tablet's update kept the phone's blob, which the tablet can fetch.
            try await Self.connect(gateway) { peer in
                let fetched = try await peer.connection.sendRequest(
                    ActivePeer.message(GetAttachmentRequest(digest: digest, docID: "phone-doc", collection: 0)))
                #expect(Data(fetched.body) == blob)
            }
        }
    }
}
