import EdgeGatewayTestSupport
import EdgeStore
import Foundation
import ReplicationProtocol
import SyncIdentifiers
import Testing

@testable import EdgeReplication

/// `doc` edited on both sides after a sync: locally `localEdits` times from the synced base,
/// upstream once. Returns the upstream's revision.
private func createConflict(
    local: LocalDatabase, remote: DocumentDatabase, gateway: TestGateway, localEdits: Int = 1
) async throws -> SavedRevision {
    let base = try await local.database.save("doc", body: Data(#"{"shared":"base","v":0}"#.utf8), parentRevID: nil)
    try await local.replicate(with: gateway, .push)
    var parent = base.revID
    for edit in 1...localEdits {
        parent = try await local.database.save(
            "doc", body: Data(#"{"shared":"local","mine":\#(edit)}"#.utf8), parentRevID: parent
        ).revID
    }
    return try await remote.save("doc", body: Data(#"{"shared":"remote","theirs":1}"#.utf8), parentRevID: base.revID)
}

/// Syncs again and checks that both sides have one leaf, the same current revision and body.
private func expectConverged(
    local: LocalDatabase, remote: DocumentDatabase, gateway: TestGateway,
    resolver: ActiveReplicator.ConflictResolver, sourceLocation: SourceLocation = #_sourceLocation
) async throws {
    let status = try await local.replicate(with: gateway, .pushAndPull) { $0.conflictResolver = resolver }
    #expect(status.lastError == nil, sourceLocation: sourceLocation)
    let mine = try #require(try await local.database.document("doc"), sourceLocation: sourceLocation)
    let theirs = try #require(try await remote.document("doc"), sourceLocation: sourceLocation)
    #expect(theirs.revID == mine.revID, "the upstream has the resolved revision", sourceLocation: sourceLocation)
    #expect(theirs.deleted == mine.deleted, sourceLocation: sourceLocation)
    #expect(try object(theirs.body) == object(mine.body), sourceLocation: sourceLocation)
    #expect(try await remote.leafRevisions("doc").count == 1, sourceLocation: sourceLocation)
    #expect(try await local.database.leafRevisions("doc").count == 1, sourceLocation: sourceLocation)
}

@Suite("Active replicator conflict resolution against the project's own listener")
struct ActiveReplicatorConflictTests {
    @Test("default: the side with the longer history wins")
    func defaultLongerHistoryWins() async throws {
        try await TestGateway.run { gateway in
            let remote = try await gateway.database
            try await LocalDatabase.run { local in
                _ = try await createConflict(local: local, remote: remote, gateway: gateway, localEdits: 2)
                try await local.replicate(with: gateway, .pushAndPull) { $0.conflictResolver = .default }

                #expect(try await local.database.leafRevisions("doc").count == 1)
                let current = try #require(try await local.database.document("doc"))
                #expect(try object(current.body) == ["shared": "local", "mine": 2])
                try await expectConverged(local: local, remote: remote, gateway: gateway, resolver: .default)
            }
        }
    }

    @Test("default: an upstream edit with the longer history wins as it is")
    func defaultRemoteLongerHistoryWins() async throws {
        try await TestGateway.run { gateway in
            let remote = try await gateway.database
            try await LocalDatabase.run { local in
                let theirs = try await createConflict(local: local, remote: remote, gateway: gateway)
                let newer = try await remote.save(
                    "doc", body: Data(#"{"shared":"remote","theirs":2}"#.utf8), parentRevID: theirs.revID)
                try await local.replicate(with: gateway, .pushAndPull) { $0.conflictResolver = .default }

                #expect(try await local.database.leafRevisions("doc").map(\.revID) == [newer.revID])
                try await expectConverged(local: local, remote: remote, gateway: gateway, resolver: .default)
            }
        }
    }

    @Test("default: an upstream deletion wins over a local edit")
    func defaultRemoteDeletionWins() async throws {
        try await TestGateway.run { gateway in
            let remote = try await gateway.database
            try await LocalDatabase.run { local in
                let base = try await local.database.save("doc", body: Data(#"{"v":0}"#.utf8), parentRevID: nil)
                try await local.replicate(with: gateway, .push)
                let edited = try await local.database.save("doc", body: Data(#"{"v":1}"#.utf8), parentRevID: base.revID)
                try await local.database.save("doc", body: Data(#"{"v":2}"#.utf8), parentRevID: edited.revID)
                let tombstone = try await remote.delete("doc", parentRevID: base.revID)
                try await local.replicate(with: gateway, .pushAndPull)

                let current = try #require(try await local.database.document("doc"))
                #expect(current.deleted, "a deletion wins even against the longer history")
                #expect(current.revID == tombstone.revID)
                #expect(try await local.database.leafRevisions("doc").count == 1)
                try await expectConverged(local: local, remote: remote, gateway: gateway, resolver: .default)
            }
        }
    }

    @Test("default: a local deletion wins over an upstream edit and is pushed on top of it")
    func defaultLocalDeletionWins() async throws {
        try await TestGateway.run { gateway in
            let remote = try await gateway.database
            try await LocalDatabase.run { local in
                let base = try await local.database.save("doc", body: Data(#"{"v":0}"#.utf8), parentRevID: nil)
                try await local.replicate(with: gateway, .push)
                try await local.database.delete("doc", parentRevID: base.revID)
                let edited = try await remote.save("doc", body: Data(#"{"v":1}"#.utf8), parentRevID: base.revID)
                try await local.replicate(with: gateway, .pushAndPull)

                let current = try #require(try await local.database.document("doc"))
                #expect(current.deleted)
                #expect(try await local.database.revisionHistory("doc", revID: current.revID).first == edited.revID)
                try await expectConverged(local: local, remote: remote, gateway: gateway, resolver: .default)
                #expect(try await remote.document("doc")?.deleted == true)
            }
        }
    }

    @Test("local-wins keeps the local body as a new revision on top of the upstream's")
    func localWins() async throws {
        try await TestGateway.run { gateway in
            let remote = try await gateway.database
            try await LocalDatabase.run { local in
                let theirs = try await createConflict(local: local, remote: remote, gateway: gateway)
                try await local.replicate(with: gateway, .pushAndPull) { $0.conflictResolver = .localWins }

                let leaves = try await local.database.leafRevisions("doc")
                #expect(leaves.count == 1)
                let current = try #require(try await local.database.document("doc"))
                #expect(try object(current.body) == ["shared": "local", "mine": 1])
                #expect(try await local.database.revisionHistory("doc", revID: current.revID).first == theirs.revID)
                try await expectConverged(local: local, remote: remote, gateway: gateway, resolver: .localWins)
            }
        }
    }

    @Test("remote-wins makes the upstream's revision current and drops the local branch")
    func remoteWins() async throws {
        try await TestGateway.run { gateway in
            let remote = try await gateway.database
            try await LocalDatabase.run { local in
                let theirs = try await createConflict(local: local, remote: remote, gateway: gateway, localEdits: 3)
                try await local.replicate(with: gateway, .pushAndPull) { $0.conflictResolver = .remoteWins }

                #expect(try await local.database.leafRevisions("doc").map(\.revID) == [theirs.revID])
                let current = try #require(try await local.database.document("doc"))
                #expect(try object(current.body) == ["shared": "remote", "theirs": 1])
                try await expectConverged(local: local, remote: remote, gateway: gateway, resolver: .remoteWins)
            }
        }
    }

    @Test("merge combines both sides' properties; the local value wins where both differ")
    func merge() async throws {
        try await TestGateway.run { gateway in
            let remote = try await gateway.database
            try await LocalDatabase.run { local in
                let theirs = try await createConflict(local: local, remote: remote, gateway: gateway)
                try await local.replicate(with: gateway, .pushAndPull) { $0.conflictResolver = .merge }

                #expect(try await local.database.leafRevisions("doc").count == 1)
                let current = try #require(try await local.database.document("doc"))
                #expect(try object(current.body) == ["shared": "local", "mine": 1, "theirs": 1])
                #expect(try await local.database.revisionHistory("doc", revID: current.revID).first == theirs.revID)
                try await expectConverged(local: local, remote: remote, gateway: gateway, resolver: .merge)
            }
        }
    }
}

@Suite("Conflict resolver rules")
struct ConflictResolverRuleTests {
    private static func side(_ revID: String, deleted: Bool = false, _ body: String = "{}") throws
        -> ConflictingRevision
    {
        ConflictingRevision(revID: try RevisionID(revID), deleted: deleted, body: Data(body.utf8))
    }

    private static func conflict(_ local: ConflictingRevision, _ remote: ConflictingRevision) -> RevisionConflict {
        RevisionConflict(docID: "doc", local: local, remote: remote)
    }

    @Test("default: deletion, then generation, then the higher revision ID")
    func defaultRules() throws {
        let resolve = ActiveReplicator.ConflictResolver.default.resolve
        #expect(resolve(Self.conflict(try Self.side("5-aa"), try Self.side("2-bb", deleted: true))) == .remote)
        #expect(resolve(Self.conflict(try Self.side("2-aa", deleted: true), try Self.side("5-bb"))) == .local)
        #expect(
            resolve(Self.conflict(try Self.side("2-aa", deleted: true), try Self.side("2-bb", deleted: true)))
                == .remote)
        #expect(resolve(Self.conflict(try Self.side("3-aa"), try Self.side("2-ff"))) == .local)
        #expect(resolve(Self.conflict(try Self.side("2-ff"), try Self.side("3-aa"))) == .remote)
        #expect(resolve(Self.conflict(try Self.side("2-bb"), try Self.side("2-aa"))) == .local)
        #expect(resolve(Self.conflict(try Self.side("2-aa"), try Self.side("2-bb"))) == .remote)
    }

    @Test("merge: local values win, a merge equal to the remote body keeps it, deletions fall back to the default")
    func mergeRules() throws {
        let resolve = ActiveReplicator.ConflictResolver.merge.resolve
        let merged = resolve(
            Self.conflict(try Self.side("2-aa", #"{"a":1,"both":"l"}"#), try Self.side("2-bb", #"{"b":2,"both":"r"}"#)))
        guard case .merged(let body) = merged else {
            Issue.record("expected a merged body, got \(merged)")
            return
        }
        #expect(try object(body) == ["a": 1, "b": 2, "both": "l"])
        #expect(
            resolve(Self.conflict(try Self.side("2-aa", #"{"a":1}"#), try Self.side("2-bb", #"{"a":1,"b":2}"#)))
                == .remote)
        #expect(
            resolve(Self.conflict(try Self.side("9-aa", #"{"a":1}"#), try Self.side("2-bb", deleted: true))) == .remote)
        #expect(
            resolve(Self.conflict(try Self.side("2-aa", deleted: true), try Self.side("9-bb", #"{"a":1}"#))) == .local)
    }
}
