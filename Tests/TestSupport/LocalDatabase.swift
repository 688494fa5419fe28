import EdgeReplication
import EdgeStore
import Foundation
import ReplicationProtocol
import SyncIdentifiers

/// A local database in its own temporary directory, the active replicator's side.
package struct LocalDatabase {
    package let store: DocumentStore
    package let database: DocumentDatabase
    package let directory: URL
    /// What its replicators offer: rev trees for the suites that check rev-tree IDs and histories, version vectors
    /// (or the default, `auto`) for those that check versions.
    package var subprotocols: [ReplicationSubprotocol]

    package static func run(
        speaking subprotocols: [ReplicationSubprotocol] = ReplicationSubprotocol.revisionTreeOffer,
        _ body: (LocalDatabase) async throws -> Void
    ) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "edge-active-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try DocumentStore(dataDirectory: directory)
        let database = try await store.database(named: "local")
        try await body(
            LocalDatabase(store: store, database: database, directory: directory, subprotocols: subprotocols))
    }

    /// Replicates once with the gateway and returns the replicator's final status.
    @discardableResult
    package func replicate(
        with gateway: TestGateway, _ direction: ActiveReplicator.Direction, host: String = "127.0.0.1",
        remoteUUID: String = "upstream-1", adjusting adjust: (inout ActiveReplicator.Configuration) -> Void = { _ in }
    ) async throws -> ActiveReplicator.Status {
        let replicator = makeReplicator(with: gateway, direction, host: host, remoteUUID: remoteUUID, adjusting: adjust)
        try await replicator.run()
        return await replicator.status()
    }

    /// A replicator for the gateway's database, not started.
    package func makeReplicator(
        with gateway: TestGateway, _ direction: ActiveReplicator.Direction, host: String = "127.0.0.1",
        remoteUUID: String = "upstream-1", adjusting adjust: (inout ActiveReplicator.Configuration) -> Void = { _ in }
    ) -> ActiveReplicator {
        var configuration = ActiveReplicator.Configuration(
            remoteURL: "ws://\(host):\(gateway.port)/\(TestGateway.databaseName)", remoteUUID: remoteUUID,
            direction: direction, subprotocols: subprotocols)
        adjust(&configuration)
        return ActiveReplicator(database: database, configuration: configuration, logger: testLogger)
    }
}

/// Saves `count` documents `<prefix>-<n>` and returns their revision IDs by document ID.
@discardableResult
package func saveDocuments(_ count: Int, prefix: String, in database: DocumentDatabase) async throws -> [String:
    RevisionID]
{
    var revisions: [String: RevisionID] = [:]
    for index in 0..<count {
        let docID = "\(prefix)-\(index)"
        revisions[docID] = try await database.save(docID, body: Data(#"{"n":\#(index)}"#.utf8), parentRevID: nil).revID
    }
    return revisions
}

package func currentRevisions(of docIDs: some Sequence<String>, in database: DocumentDatabase) async throws -> [String:
    RevisionID]
{
    var revisions: [String: RevisionID] = [:]
    for docID in docIDs {
        revisions[docID] = try await database.document(docID)?.revID
    }
    return revisions
}
