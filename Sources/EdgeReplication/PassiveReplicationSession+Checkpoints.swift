import BLIPCodec
import EdgeStore
import Foundation
import ReplicationProtocol
import SyncIdentifiers

extension PassiveReplicationSession {
    /// Peer checkpoints live as local documents of the collection they belong to, under this prefix
    /// and the client's checkpoint ID, so they cannot collide with other local documents.
    static let checkpointPrefix = "checkpoint/"

    /// `getCollections` (spec §3.1): only as the first message; fixes collection-aware mode.
    func getCollections(_ request: BLIPMessage) async throws -> BLIPMessage {
        guard case .undecided = mode else {
            throw ErrorReply.blip(400, "Invalid getCollections message: not the first message").blipError
        }
        let decoded = try request.decode(GetCollectionsRequest.self)
        let collections = decoded.collections.map { collection in
            collection.flatMap { configuration.servedCollections.contains($0) ? $0 : nil }
        }
        mode = .collectionAware(collections)
        var entries: [GetCollectionsReply.Entry] = []
        for (checkpointID, collection) in zip(decoded.checkpointIDs, collections) {
            guard let collection else {
                entries.append(.missing)
                continue
            }
            if let stored = try await storedCheckpoint(checkpointID, in: collection) {
                entries.append(try .checkpoint(revision: stored.revID, storedBody: Array(stored.body)))
            } else {
                entries.append(.noCheckpoint)
            }
        }
        return request.reply(with: GetCollectionsReply(entries: entries))
    }

    /// `getCheckpoint` (spec §3.2): the stored body verbatim, or `HTTP/404`.
    func getCheckpoint(_ request: BLIPMessage) async throws -> BLIPMessage {
        let decoded = try request.decode(GetCheckpointRequest.self)
        let keyspace = try keyspace(for: decoded.collection)
        guard let stored = try await storedCheckpoint(decoded.client, in: keyspace.collection) else {
            throw ErrorReply.http(404).blipError
        }
        return request.reply(with: GetCheckpointReply(revision: stored.revID, body: Array(stored.body)))
    }

    /// `setCheckpoint` (spec §3.3): compare-and-swap on the stored revision; `HTTP/409` on mismatch.
    func setCheckpoint(_ request: BLIPMessage) async throws -> BLIPMessage {
        let decoded = try request.decode(SetCheckpointRequest.self)
        let keyspace = try keyspace(for: decoded.collection)
        do {
            let revision = try await database.putLocalDocument(
                Self.checkpointPrefix + decoded.client, body: Data(decoded.body), expectedRevID: decoded.revision,
                in: keyspace.collection)
            return request.reply(with: SetCheckpointReply(revision: revision))
        } catch let error as StoreError {
            throw error.errorReply.blipError
        }
    }

    private func storedCheckpoint(_ client: String, in collection: CollectionName) async throws -> LocalDocument? {
        do {
            return try await database.localDocument(Self.checkpointPrefix + client, in: collection)
        } catch let error as StoreError {
            throw error.errorReply.blipError
        }
    }
}
