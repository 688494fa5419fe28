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
            #expect(try await database.revisionsKnownToRemote(hub, of: ["edited", "pushed"]) == ["edited": rev(1, "b")])
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
        let known = try await revisionsKnownToRemote(remote, of: changes.map(\.docID))
        return Set(changes.filter { known[$0.docID] == $0.revID }.map(\.docID))
    }
}
