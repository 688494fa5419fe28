import EdgeGatewayTestSupport
import EdgeStore
import Foundation
import SyncIdentifiers
import Testing

@testable import EdgeReplication

/// The active replicator in collection-aware mode (spec §3.1): several collections over one connection, each with
/// its own checkpoint, against the project's own listener.
@Suite("Active replicator with named collections")
struct ActiveCollectionTests {
    static let orders = try! CollectionName(scope: "store", name: "orders")

    static func replicate(
        _ local: LocalDatabase, with gateway: TestGateway, _ direction: ActiveReplicator.Direction,
        collections: [CollectionName]
    ) async throws -> ActiveReplicator.Status {
        let replicator = ActiveReplicator(
            database: local.database,
            configuration: .init(
                remoteURL: "ws://127.0.0.1:\(gateway.port)/\(TestGateway.databaseName)", remoteUUID: "collections",
                direction: direction, collections: collections),
            logger: testLogger)
        try await replicator.run()
        return await replicator.status()
    }

    @Test("push and pull move each collection's documents into the same collection; a second run resumes")
    func pushAndPullTwoCollections() async throws {
        try await TestGateway.run(collections: [.default, try CollectionName(parsing: "store.orders")]) { gateway in
            try await LocalDatabase.run { local in
                try await local.database.createCollection(Self.orders)
                _ = try await local.database.save(
                    "order-1", body: Data(#"{"qty":1}"#.utf8), parentRevID: nil, in: Self.orders)
                _ = try await local.database.save("note-1", body: Data(#"{"text":"hi"}"#.utf8), parentRevID: nil)
                let remote = try await gateway.database
                _ = try await remote.save("order-2", body: Data(#"{"qty":2}"#.utf8), parentRevID: nil, in: Self.orders)

                let status = try await Self.replicate(
                    local, with: gateway, .pushAndPull, collections: [.default, Self.orders])
                #expect(status.lastError == nil)
                #expect(try await remote.document("order-1", in: Self.orders) != nil)
                #expect(try await remote.document("order-1") == nil)
                #expect(try await remote.document("note-1") != nil)
                #expect(try await local.database.document("order-2", in: Self.orders) != nil)
                #expect(try await local.database.document("order-2") == nil)

                let again = try await Self.replicate(
                    local, with: gateway, .pushAndPull, collections: [.default, Self.orders])
                // Only the pulled order-2 may be proposed once more (the store does not record which peer a
                // revision came from); the upstream answers that it has it, so no revision is sent.
                #expect(again.total <= 1, "the second run proposed \(again.total) revisions")
                #expect(try await remote.changes(in: Self.orders, since: 0).count == 2)
            }
        }
    }

    @Test("a collection the upstream does not serve stops the replication with a clear error")
    func unservedCollection() async throws {
        try await TestGateway.run(collections: [.default]) { gateway in
            try await LocalDatabase.run { local in
                try await local.database.createCollection(Self.orders)
                await #expect(throws: ActiveReplicatorError.collectionNotFound("store.orders")) {
                    _ = try await Self.replicate(local, with: gateway, .push, collections: [.default, Self.orders])
                }
            }
        }
    }
}
