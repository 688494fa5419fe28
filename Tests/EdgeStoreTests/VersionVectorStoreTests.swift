import Foundation
import SyncIdentifiers
import Testing
import VersionVectors

@testable import EdgeStore

/// Every revision carries its rev-tree ID and, from schema v3 on, a hybrid logical vector: received from a
/// CBMobile_4 peer, or minted once by this node for what rev-tree peers and the REST API write.
@Suite("Version vectors in the store")
struct VersionVectorStoreTests {
    /// Two Couchbase Lite 4.0.3 databases' sources, from the captures (WIRE-NOTES.md §4, §8).
    static let deviceA = "W4IpzVcVScq75WMaxJ6WUA"
    static let deviceB = "HDL3DmjHQ6aGU6XSGrYP5g"

    static func nodeConfiguration(_ source: SourceID) -> StoreConfiguration {
        var configuration = StoreConfiguration()
        configuration.versionSource = source
        return configuration
    }

    static func vector(_ text: String) throws -> HybridLogicalVector {
        try HybridLogicalVector(text)
    }

    /// A timestamp half an hour ahead of this machine's clock, plus `counter`: a device whose clock runs fast, but
    /// within the skew the store accepts.
    static func aheadOfNow(counter: UInt64 = 0) -> String {
        let nanoseconds = UInt64((Date().timeIntervalSince1970 + 1_800) * 1e9) & ~0xFFFF
        return String(nanoseconds + counter, radix: 16)
    }

    @Test("A REST write mints a version of the node's source; the node's next write replaces it")
    func restWritesMintVersions() async throws {
        let node = SourceID(uuid: UUID())
        try await withDatabase(configuration: Self.nodeConfiguration(node)) { database in
            let first = try await database.save("doc", body: json(#"{"a":1}"#), parentRevID: nil)
            let created = try #require(try await database.document("doc")?.vector)
            #expect(created.current.source == node)
            #expect(created.previous.isEmpty && created.legacy.isEmpty)

            try await database.save("doc", body: json(#"{"a":2}"#), parentRevID: first.revID)
            let updated = try #require(try await database.document("doc")?.vector)
            #expect(updated.current.source == node)
            #expect(updated.current.timestamp > created.current.timestamp)
            #expect(updated.previous.isEmpty, "a source appears once: its new version supersedes its old one")
            #expect(try await database.changes(since: 0).last?.version == updated.current)
        }
    }

    @Test("A 4.x device's revision becomes a rev-tree child of the current revision and keeps its vector")
    func versionedRevisionsGetRevTreeRevisions() async throws {
        try await withDatabase { database in
            let created = try Self.vector("18ebd082ff6e0000@\(Self.deviceA)")
            let write = VersionedRevision(docID: "doc", vector: created, body: json(#"{"v":1}"#))
            #expect(try await database.insertVersionedRevisions([write]) == [.inserted(sequence: 1)])
            let first = try #require(try await database.document("doc"))
            #expect(first.revID.generation == 1)
            #expect(first.vector == created)

            // Captured as update-delete: the same database's next version replaces its own entry.
            let updated = try Self.vector("18ebd0830e690000@\(Self.deviceA)")
            let update = VersionedRevision(docID: "doc", vector: updated, body: json(#"{"v":2}"#))
            #expect(try await database.insertVersionedRevisions([update]) == [.inserted(sequence: 2)])
            let second = try #require(try await database.document("doc"))
            #expect(second.revID.generation == 2)
            #expect(second.vector == updated)
            #expect(try await database.revisionHistory("doc", revID: second.revID) == [first.revID])
            #expect(try await database.changes(since: 1).map(\.version) == [updated.current])

            // The same version again, or an older one, changes nothing.
            #expect(
                try await database.insertVersionedRevisions([update, write]) == [.alreadyPresent, .alreadyPresent])

            // Another device that never saw A's version is concurrent: refused with the current version.
            let concurrent = try Self.vector("18ebd08474560000@\(Self.deviceB)")
            let results = try await database.insertVersionedRevisions([
                VersionedRevision(docID: "doc", vector: concurrent, body: json(#"{"v":"b"}"#))
            ])
            #expect(results == [.failed(.conflict(docID: "doc", currentRevID: updated.current.description))])
            #expect(try await database.document("doc")?.revID == second.revID)
        }
    }

    @Test("A rev-tree client's update over a 4.x version gets a node version that keeps the device's as previous")
    func revTreeUpdatesOverVersions() async throws {
        let node = SourceID(uuid: UUID())
        try await withDatabase(configuration: Self.nodeConfiguration(node)) { database in
            let fromDevice = try Self.vector("18ebd08474560000@\(Self.deviceA)")
            _ = try await database.insertVersionedRevisions([
                VersionedRevision(docID: "doc", vector: fromDevice, body: json(#"{"v":1}"#))
            ])
            let parent = try #require(try await database.document("doc")).revID
            let child = try RevisionID("2-\(String(repeating: "e", count: 40))")
            let results = try await database.insertExistingRevisions([
                ExistingRevision(docID: "doc", revID: child, history: [parent], body: json(#"{"v":2}"#))
            ])
            #expect(results == [.inserted(sequence: 2)])
            let minted = try #require(try await database.document("doc")?.vector)
            #expect(minted.current.source == node)
            #expect(minted.current.timestamp > fromDevice.current.timestamp)
            #expect(minted.previous == [fromDevice.current])

            // Proposals are judged against the node's version.
            let statuses = try await database.checkProposedVersions([
                ProposedVersion(docID: "doc", vector: fromDevice),
                ProposedVersion(
                    docID: "doc",
                    vector: try Self.vector(
                        "\(String(minted.current.timestamp + 0x10000, radix: 16))@\(Self.deviceA); \(minted.current)")),
                ProposedVersion(docID: "doc", vector: try Self.vector("18ebd0a000000000@\(Self.deviceA)")),
                ProposedVersion(docID: "new", vector: fromDevice),
                ProposedVersion(docID: "_bad", vector: fromDevice),
            ])
            #expect(
                statuses.prefix(4) == [.alreadyHave, .accept, .conflict(current: minted.current.description), .accept])
            guard case .invalid(.invalidDocumentID) = statuses[4] else {
                Issue.record("a reserved document ID was not refused: \(statuses[4])")
                return
            }
        }
    }

    @Test("An accepted vector keeps what the stored one knew beyond it, and the clock stays ahead of it")
    func acceptedVectorsKeepHistory() async throws {
        let node = SourceID(uuid: UUID())
        try await withDatabase(configuration: Self.nodeConfiguration(node)) { database in
            try await database.save("doc", body: json(#"{"v":0}"#), parentRevID: nil)
            let nodeVersion = try #require(try await database.document("doc")?.vector).current
            // A device far ahead of this node's clock writes over the node's version.
            let aheadTime = Self.aheadOfNow()
            let ahead = try Self.vector("\(aheadTime)@\(Self.deviceA); \(nodeVersion)")
            #expect(
                try await database.insertVersionedRevisions([
                    VersionedRevision(docID: "doc", vector: ahead, body: json(#"{"v":1}"#))
                ]) == [.inserted(sequence: 2)])
            // Then a device that saw only A's version, not the node's, writes over it.
            let overA = try Self.vector(
                "\(Self.aheadOfNow(counter: 0x10000))@\(Self.deviceB); \(aheadTime)@\(Self.deviceA)")
            _ = try await database.insertVersionedRevisions([
                VersionedRevision(docID: "doc", vector: overA, body: json(#"{"v":2}"#))
            ])
            let stored = try #require(try await database.document("doc")?.vector)
            #expect(stored.current == overA.current)
            #expect(Set(stored.previous) == [ahead.current, nodeVersion])

            try await database.save("other", body: json("{}"), parentRevID: nil)
            let minted = try #require(try await database.document("other")?.vector).current
            #expect(minted.timestamp > overA.current.timestamp, "a minted version is newer than every one received")
        }
    }

    @Test("A version more than an hour ahead of this node's clock is refused, and the clock does not move")
    func farFutureVersionsAreRefused() async throws {
        try await withDatabase(configuration: Self.nodeConfiguration(SourceID(uuid: UUID()))) { database in
            let farAhead = try Self.vector("ffffffffffff0000@\(Self.deviceA)")
            let results = try await database.insertVersionedRevisions([
                VersionedRevision(docID: "doc", vector: farAhead, body: json("{}"))
            ])
            guard case .failed(.invalidRevisionHistory(let docID, let reason)) = results.first else {
                Issue.record("a far-future version was not refused: \(results)")
                return
            }
            #expect(docID == "doc" && reason.contains("ahead of this node's clock"))
            #expect(try await database.document("doc") == nil)
            try await database.save("after", body: json("{}"), parentRevID: nil)
            let minted = try #require(try await database.document("after")?.vector).current
            #expect(minted.timestamp < UInt64((Date().timeIntervalSince1970 + 60) * 1e9))
        }
    }

    @Test("The clock never goes back across a restart")
    func clockSurvivesRestart() async throws {
        try await withTemporaryDirectory { directory in
            let node = SourceID(uuid: UUID())
            let ahead = try Self.vector("\(Self.aheadOfNow())@\(Self.deviceA)")
            do {
                let store = try DocumentStore(dataDirectory: directory, configuration: Self.nodeConfiguration(node))
                let database = try await store.database(named: "db")
                _ = try await database.insertVersionedRevisions([
                    VersionedRevision(docID: "from-device", vector: ahead, body: json("{}"))
                ])
            }
            let store = try DocumentStore(dataDirectory: directory, configuration: Self.nodeConfiguration(node))
            let database = try await store.database(named: "db")
            try await database.save("after-restart", body: json("{}"), parentRevID: nil)
            let minted = try #require(try await database.document("after-restart")?.vector).current
            #expect(minted.timestamp > ahead.current.timestamp)
        }
    }

    @Test("Previous versions older than the retention are pruned when the document is written")
    func previousVersionsArePruned() async throws {
        var configuration = StoreConfiguration()
        configuration.previousVersionRetention = .seconds(3600)
        try await withDatabase(configuration: configuration) { database in
            let now = UInt64(Date().timeIntervalSince1970 * 1e9)
            let old = Version(timestamp: now - 7200 * 1_000_000_000, source: try SourceID(Self.deviceB[...]))
            let recent = Version(timestamp: now - 60 * 1_000_000_000, source: SourceID(uuid: UUID()))
            let current = Version(timestamp: now, source: try SourceID(Self.deviceA[...]))
            let vector = try HybridLogicalVector(current: current, previous: [recent, old])
            _ = try await database.insertVersionedRevisions([
                VersionedRevision(docID: "doc", vector: vector, body: json("{}"))
            ])
            #expect(try await database.document("doc")?.vector?.previous == [recent])
        }
    }

    @Test("A database written before vectors migrates in place; its legacy revisions are what 4.x writes descend from")
    func schemaV2Migrates() async throws {
        try await withTemporaryDirectory { directory in
            let databases = directory.appendingPathComponent("databases", isDirectory: true)
            try FileManager.default.createDirectory(at: databases, withIntermediateDirectories: true)
            let fixture = Bundle.module.resourceURL!.appendingPathComponent("Fixtures/schema-v2.sqlite3")
            try FileManager.default.copyItem(at: fixture, to: databases.appendingPathComponent("db.sqlite3"))
            let node = SourceID(uuid: UUID())
            let store = try DocumentStore(dataDirectory: directory, configuration: Self.nodeConfiguration(node))
            let database = try await store.database(named: "db")

            let one = try RevisionID("1-e2105ce62efd4e67923859c973e42a237c5e39ad")
            let three = try RevisionID("3-cccccccccccccccccccccccccccccccccccccccc")
            let legacyOne = try #require(try await database.document("legacy-1"))
            #expect(legacyOne.revID == one && legacyOne.body == json(#"{"name":"one"}"#) && legacyOne.vector == nil)
            #expect(try await database.document("legacy-deleted")?.deleted == true)
            #expect(try await database.changes(since: 0).map(\.version) == [nil, nil, nil])

            // A 4.x device descends from a legacy revision only when its vector names it.
            let statuses = try await database.checkProposedVersions([
                ProposedVersion(docID: "legacy-1", vector: try Self.vector("18ebd08474560000@\(Self.deviceA); \(one)")),
                ProposedVersion(docID: "legacy-1", vector: try Self.vector("18ebd08474560000@\(Self.deviceA)")),
            ])
            #expect(statuses == [.accept, .conflict(current: one.description)])
            let fromDevice = try Self.vector("18ebd08474560000@\(Self.deviceA); \(one)")
            _ = try await database.insertVersionedRevisions([
                VersionedRevision(docID: "legacy-1", vector: fromDevice, body: json(#"{"name":"uno"}"#))
            ])
            let upgraded = try #require(try await database.document("legacy-1"))
            #expect(upgraded.revID.generation == 2 && upgraded.vector == fromDevice)
            #expect(try await database.revisionHistory("legacy-1", revID: upgraded.revID) == [one])

            // A REST write over a legacy revision starts the vector after it.
            try await database.save("legacy-3", body: json(#"{"name":"drei"}"#), parentRevID: three)
            let minted = try #require(try await database.document("legacy-3")?.vector)
            #expect(minted.current.source == node && minted.legacy == [three])
        }
    }
}
