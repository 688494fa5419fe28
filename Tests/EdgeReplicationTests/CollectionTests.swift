import BLIPCodec
import EdgeGatewayTestSupport
import EdgeStore
import Foundation
import ReplicationProtocol
import SyncIdentifiers
import Testing

@Suite("Collection-aware replication")
struct CollectionTests {
    @Test("getCollections maps served collections, null for others; messages use the collection index")
    func namedCollection() async throws {
        let inventory = try CollectionName(scope: "store", name: "inventory")
        let archive = try CollectionName(scope: "store", name: "archive")
        try await TestGateway.run(collections: [try CollectionName(parsing: "store.inventory")]) { gateway in
            let checkpoint = json(#"{"time":1,"local":1}"#)
            try await ActivePeer.connect(port: gateway.port) { peer in
                let reply = try await peer.send(
                    GetCollectionsRequest(checkpointIDs: ["cp-inv", "cp-arc"], collections: [inventory, archive]),
                    expecting: GetCollectionsReply.self)
                #expect(reply.entries == [.noCheckpoint, .missing])
                let proposal = try await peer.send(
                    ProposeChangesRequest(
                        rows: [ReplicationProtocol.ProposedChange(docID: "item", revision: .tree(revision(1, "a")))],
                        collection: 0),
                    expecting: ProposeChangesReply.self)
                #expect(proposal.statuses.isEmpty)
                try await peer.send(
                    RevRequest(
                        docID: "item", revision: .tree(revision(1, "a")), collection: 0, body: json(#"{"qty":3}"#)))
                _ = try await peer.send(
                    SetCheckpointRequest(client: "cp-inv", revision: nil, body: checkpoint, collection: 0),
                    expecting: SetCheckpointReply.self)
                let unserved = try await peer.errorReply(for: GetCheckpointRequest(client: "cp-arc", collection: 1))
                #expect(unserved?.code == 404)
                let missingIndex = try await peer.errorReply(for: GetCheckpointRequest(client: "cp-inv"))
                #expect(missingIndex?.code == 400)
                let again = try await peer.errorReply(
                    for: GetCollectionsRequest(checkpointIDs: ["cp-inv"], collections: [inventory]))
                #expect(again == BLIPErrorReply(domain: "BLIP", code: 400, message: again?.message ?? ""))
            }
            let database = try await gateway.database
            let collection = try CollectionName(scope: "store", name: "inventory")
            #expect(
                try await database.document("item", in: collection)?.revID.description == revision(1, "a").description)

            try await ActivePeer.connect(port: gateway.port) { peer in
                let reply = try await peer.send(
                    GetCollectionsRequest(checkpointIDs: ["cp-inv"], collections: [inventory]),
                    expecting: GetCollectionsReply.self)
                #expect(reply.entries == [try .checkpoint(revision: "1-cc", storedBody: checkpoint)])
                let recorder = PullRecorder()
                await recorder.install(on: peer.connection)
                try await peer.send(SubChangesRequest(collection: 0))
                try await eventually("the pulled item") { await recorder.revisions.count == 1 }
                #expect(await recorder.revisions.first?.collection == 0)
            }
        }
    }

    @Test("legacy mode refuses a collection property")
    func legacyRefusesCollectionProperty() async throws {
        try await TestGateway.run { gateway in
            try await ActivePeer.connect(port: gateway.port) { peer in
                let refused = try await peer.errorReply(for: GetCheckpointRequest(client: "cp", collection: 0))
                #expect(refused?.code == 400)
            }
        }
    }
}
