import EdgeStore
import Foundation
import ReplicationProtocol
import SyncIdentifiers
import SyncJSON

/// `new_edits=false` writes (`_bulk_docs` and `PUT /{keyspace}/{docid}`): the client's own revision, stored
/// with its history as a replicator stores a pulled one, so its revision ID survives a copy between databases.
///
/// As CouchDB and Sync Gateway read such a document (Sync Gateway's `ParseRevisions`): `_revisions`
/// (`{"start": generation, "ids": [digest, parent digest, …]}`) when present, otherwise `_rev` alone (a
/// revision with no known ancestors). A revision that does not extend the current one becomes a branch of
/// the revision tree, a conflict, as CouchDB keeps it and Sync Gateway does with `allow_conflicts`; nothing
/// is minted. Unlike Sync Gateway, a `_rev` that disagrees with `_revisions` is refused instead of ignored.
enum RESTExistingRevisions {
    /// Sync Gateway's reason for a document of a `new_edits=false` request without a usable history.
    static let badRevisions = "Bad _revisions"

    static func revision(_ object: JSONObject, docID: String) throws(RESTError) -> ExistingRevision {
        let chain = try history(object)
        let (body, deleted) = try RESTDocuments.storedBody(object)
        return ExistingRevision(
            docID: docID, revID: chain[0], history: Array(chain.dropFirst()), deleted: deleted, body: body)
    }

    /// The revision, then its ancestors newest first.
    static func history(_ object: JSONObject) throws(RESTError) -> [RevisionID] {
        let rev: RevisionID? = try object["_rev"].map { value throws(RESTError) in
            guard let text = value.stringValue, let revID = try? RevisionID(text) else {
                throw .badRequest("\(badRevisions): _rev must be a revision ID such as \"1-abc1\", got \(value)")
            }
            return revID
        }
        guard let revisions = object["_revisions"] else {
            guard let rev else {
                throw .badRequest("\(badRevisions): with new_edits=false every document needs its _rev")
            }
            return [rev]
        }
        guard let fields = revisions.objectValue, let start = fields["start"]?.intValue,
            let ids = fields["ids"]?.arrayValue, !ids.isEmpty
        else {
            throw .badRequest("\(badRevisions): _revisions must be {\"start\": generation, \"ids\": [digests]}")
        }
        let digests = ids.compactMap(\.stringValue)
        guard digests.count == ids.count else {
            throw .badRequest("\(badRevisions): ids must be revision digests (strings)")
        }
        let chain: [RevisionID]
        do {
            chain = try RevisionID.chain(start: start, digests: digests)
        } catch {
            throw .badRequest("\(badRevisions): \(RESTError(storeError: error).reason) (start \(start))")
        }
        if let rev, rev != chain[0] {
            throw .badRequest("\(badRevisions): _rev \(rev) is not the newest revision of _revisions, \(chain[0])")
        }
        return chain
    }

    /// Stores one revision per entry; entries that failed to parse keep their error and are not sent to the store.
    static func store(
        _ entries: [(docID: String, revision: Result<ExistingRevision, RESTError>)], in keyspace: RESTKeyspace
    ) async throws -> [Result<RevisionID, RESTError>] {
        let valid = entries.compactMap { try? $0.revision.get() }
        var stored = try await keyspace.database.insertExistingRevisions(valid, in: keyspace.collection)
            .makeIterator()
        return entries.map { entry in
            switch entry.revision {
            case .failure(let error):
                return .failure(error)
            case .success(let revision):
                switch stored.next() {
                case .inserted, .alreadyPresent, .resolvedConflict:
                    return .success(revision.revID)
                case .failed(let error):
                    return .failure(RESTError(storeError: error))
                case nil:
                    preconditionFailure("the store answers once per revision")
                }
            }
        }
    }
}
