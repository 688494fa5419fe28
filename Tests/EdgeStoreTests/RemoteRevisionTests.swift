import Foundation
import Testing

@testable import EdgeStore

@Suite("Revisions known to be on a remote database")
struct RemoteRevisionTests {
    @Test("A remote database keeps its number; another identity gets another")
    func remoteNumbers() async throws {
        try await withDatabase { database in
            let hub = try await database.remoteDatabaseID(identifiedBy: "hub")
            #expect(try await database.remoteDatabaseID(identifiedBy: "hub") == hub)
            #expect(try await database.remoteDatabaseID(identifiedBy: "other") != hub)
        }
    }

    @Test("A pulled revision is known to its remote until it changes here, and only to that remote")
    func pulledRevisionsAreKnown() async throws {
        try await withDatabase { database in
            let hub = try await database.remoteDatabaseID(identifiedBy: "hub")
            let other = try await database.remoteDatabaseID(identifiedBy: "other")
            let fromHub = RevisionInserter(database: database, receivedFrom: hub)
            _ = try await fromHub.insert(existing("pulled", 2, "a"))
            _ = try await fromHub.insert(existing("edited", 1, "b"))
            // Pushed here by a client: no remote has it.
            _ = try await database.insertExistingRevisions([existing("pushed", 1, "c")])
            // Read before the edit, the change still names the pulled revision: nothing to push for that row,
            // and the edit comes as a later change.
            let beforeEdit = try await database.changes(since: 0)
            #expect(try await database.knownChanges(hub, beforeEdit) == ["pulled", "edited"])
            _ = try await database.save("edited", body: json(#"{"edited":true}"#), parentRevID: rev(1, "b"))

            let changes = try await database.changes(since: 0)
            #expect(try await database.knownChanges(hub, changes) == ["pulled"])
            #expect(try await database.knownChanges(other, changes).isEmpty)
            // The edit descends from the pulled revision, which stays the one the remote is known to have.
            let (_, known) = try await database.changesToPush(changes, to: hub)
            #expect(known == ["edited": rev(1, "b"), "pulled": rev(2, "a")])
        }
    }

    @Test("A conflict resolved for the local side leaves a new revision to push; for the remote side, none")
    func resolvedConflicts() async throws {
        try await withDatabase { database in
            let hub = try await database.remoteDatabaseID(identifiedBy: "hub")
            _ = try await database.insertExistingRevisions([
                existing("keeps-local", 2, "a", body: #"{"side":"local"}"#),
                existing("takes-remote", 2, "a", body: #"{"side":"local"}"#),
            ])
            _ = try await RevisionInserter(database: database, resolver: { _ in .local }, receivedFrom: hub)
                .insert(existing("keeps-local", 2, "b", body: #"{"side":"remote"}"#))
            _ = try await RevisionInserter(database: database, resolver: { _ in .remote }, receivedFrom: hub)
                .insert(existing("takes-remote", 2, "b", body: #"{"side":"remote"}"#))
            let changes = try await database.changes(since: 0)
            #expect(try await database.knownChanges(hub, changes) == ["takes-remote"])
        }
    }

    @Test("A change that a later pull of the same document replaced is not pushed back")
    func changeSupersededByPull() async throws {
        try await withDatabase { database in
            let hub = try await database.remoteDatabaseID(identifiedBy: "hub")
            // Pushed here by a client, then read by the push as its batch; then the hub's next revision was pulled.
            _ = try await database.insertExistingRevisions([existing("doc", 1, "a"), existing("local-only", 1, "c")])
            let batch = try await database.changes(since: 0)
            _ = try await RevisionInserter(database: database, receivedFrom: hub).insert(existing("doc", 2, "a"))
            #expect(try await database.knownChanges(hub, batch) == ["doc"])
            // Another remote never had "doc": the client's revision still goes to it.
            let other = try await database.remoteDatabaseID(identifiedBy: "other")
            #expect(try await database.knownChanges(other, batch).isEmpty)
            // Edited here after the pull: the newest change is pushed, on top of the hub's revision.
            let edited = try await database.save("doc", body: json(#"{"n":3}"#), parentRevID: rev(2, "a"))
            let afterEdit = try await database.changes(since: 0)
            #expect(afterEdit.first { $0.docID == "doc" }?.revID == edited.revID)
            #expect(try await database.knownChanges(hub, afterEdit).isEmpty)
            #expect(try await database.changesToPush(afterEdit, to: hub).knownToRemote == ["doc": rev(2, "a")])
        }
    }

    @Test("A purged document forgets what the remote had of it")
    func purgeForgets() async throws {
        try await withDatabase { database in
            let hub = try await database.remoteDatabaseID(identifiedBy: "hub")
            _ = try await RevisionInserter(database: database, receivedFrom: hub).insert(existing("doc", 1, "a"))
            try await database.purge("doc")
            _ = try await database.insertExistingRevisions([existing("doc", 1, "a")])
            let changes = try await database.changes(since: 0)
            #expect(try await database.knownChanges(hub, changes).isEmpty)
        }
    }
}

extension DocumentDatabase {
    /// The documents among `changes` that a push to `remote` leaves out: their revision is the one it sent.
    fileprivate func knownChanges(_ remote: RemoteDatabaseID, _ changes: [Change]) async throws -> Set<String> {
        let toPush = Set(try await changesToPush(changes, to: remote).changes.map(\.docID))
        return Set(changes.map(\.docID)).subtracting(toPush)
    }
}
