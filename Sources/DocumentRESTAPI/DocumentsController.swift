import EdgeStore
import Foundation
import Hummingbird
import NIOCore
import ReplicationProtocol
import SyncIdentifiers
import SyncJSON
import VersionVectors

/// `GET /{keyspace}`, and single documents: `GET`, `PUT`, `DELETE /{keyspace}/{docid}`, `POST /{keyspace}`.
struct DocumentsController: Sendable {
    let api: DocumentRESTAPI

    func addRoutes(to router: Router<BasicRequestContext>) {
        router.get("/{keyspace}") { request, context in
            await api.rest(request, context, writes: false) { call in try await keyspaceInfo(call) }
        }
        router.post("/{keyspace}") { request, context in
            await api.rest(request, context, writes: true) { call in try await create(call) }
        }
        router.get("/{keyspace}/{docid}") { request, context in
            await api.rest(request, context, writes: false) { call in
                try await get(call, docID: try Self.docID(context))
            }
        }
        router.put("/{keyspace}/{docid}") { request, context in
            await api.rest(request, context, writes: true) { call in
                try await put(call, docID: try Self.docID(context))
            }
        }
        router.delete("/{keyspace}/{docid}") { request, context in
            await api.rest(request, context, writes: true) { call in
                try await delete(call, docID: try Self.docID(context))
            }
        }
    }

    static func docID(_ context: BasicRequestContext, parameter: String = "docid") throws(RESTError) -> String {
        guard let raw = context.parameters.get(parameter), let docID = raw.removingPercentEncoding, !docID.isEmpty
        else {
            throw .badRequest("invalid document ID in the path")
        }
        return docID
    }

    private func keyspaceInfo(_ call: RESTCall) async throws -> Response {
        let keyspace = call.keyspace
        let counts = try await keyspace.database.collectionCountsIfPresent(keyspace.collection)
        var info: JSONObject = [
            "db_name": .string(keyspace.database.name),
            "doc_count": .integer(counts.documents),
            "update_seq": .integer(Int(counts.lastSequence)),
            "instance_start_time": .integer(Int(api.host.startTime.timeIntervalSince1970 * 1_000_000)),
            "state": "Online",
        ]
        if RESTKeyspace.parse(keyspace.text)?.collection == nil {
            info["update_seq"] = .integer(Int(try await keyspace.database.lastSequence()))
            let served = api.host.servedCollections[keyspace.database.name] ?? []
            info["collections"] = .array(served.map { .string($0.description) })
        }
        return DocumentRESTAPI.json(.object(info))
    }

    private func get(_ call: RESTCall, docID: String) async throws -> Response {
        let keyspace = call.keyspace
        if call.queryString("open_revs") != nil {
            return try await openRevisions(call, docID: docID)
        }
        let withHistory = try call.queryFlag("revs")
        let revision: (revID: RevisionID, version: Version?, deleted: Bool, body: Data)
        if let revText = call.queryString("rev") {
            let revID = try RESTRevisions.parse(revText)
            guard
                let stored = try await keyspace.database.revision(docID, revID: revID, in: keyspace.collection),
                let body = stored.body
            else {
                throw RESTError.notFound("missing")
            }
            revision = (revID, nil, stored.deleted, body)
        } else {
            guard let document = try await keyspace.database.document(docID, in: keyspace.collection) else {
                throw RESTError.notFound("missing")
            }
            guard !document.deleted else { throw RESTError.notFound("deleted") }
            revision = (document.revID, document.vector?.current, document.deleted, document.body)
        }
        var object = try RESTDocuments.documentObject(
            docID: docID, revID: revision.revID, version: revision.version, deleted: revision.deleted,
            body: revision.body)
        if withHistory {
            object["_revisions"] = try await RESTDocuments.revisionsValue(
                keyspace, docID: docID, revID: revision.revID)
        }
        return DocumentRESTAPI.json(.object(object), headers: [.eTag: "\"\(revision.revID)\""])
    }

    /// `?open_revs=all` or `?open_revs=["1-a",…]`: every requested leaf, as a JSON array of `{"ok": doc}` or
    /// `{"missing": rev}`, or as Sync Gateway's `multipart/mixed` with one part per revision (`RESTMultipart`).
    private func openRevisions(_ call: RESTCall, docID: String) async throws -> Response {
        let keyspace = call.keyspace
        let form = try RESTMultipart.form(of: call.request)
        let withHistory = try call.queryFlag("revs")
        let requested: [String]
        if call.queryString("open_revs") == "all" {
            let leaves = try await keyspace.database.leafRevisions(docID, in: keyspace.collection)
            guard !leaves.isEmpty else { throw RESTError.notFound("missing") }
            requested = leaves.map(\.revID.description)
        } else {
            guard let list = try call.queryJSON("open_revs")?.arrayValue?.compactMap(\.stringValue) else {
                throw RESTError.badRequest("open_revs must be \"all\" or a JSON array of revision IDs")
            }
            requested = list
        }
        var parts: [RESTMultipart.Part] = []
        for revText in requested {
            let revID = try RESTRevisions.parse(revText)
            guard
                let stored = try await keyspace.database.revision(docID, revID: revID, in: keyspace.collection),
                let body = stored.body
            else {
                parts.append(RESTMultipart.Part(body: ["missing": .string(revText)], isError: true))
                continue
            }
            var object = try RESTDocuments.documentObject(
                docID: docID, revID: revID, deleted: stored.deleted, body: body)
            if withHistory {
                object["_revisions"] = try await RESTDocuments.revisionsValue(keyspace, docID: docID, revID: revID)
            }
            parts.append(RESTMultipart.Part(body: .object(object), isError: false))
        }
        switch form {
        case .multipartMixed:
            return RESTMultipart.response(parts)
        case .json:
            return DocumentRESTAPI.json(.array(parts.map { $0.isError ? $0.body : ["ok": $0.body] }))
        }
    }

    private func put(_ call: RESTCall, docID: String) async throws -> Response {
        let object = try await call.jsonObjectBody()
        if call.queryString("new_edits") != nil, try !call.queryFlag("new_edits") {
            return try await putKeepingRevision(call, docID: docID, object: object)
        }
        let parent = try await RESTRevisions.expectedRevision(call, body: object, docID: docID)
        let saved = try await RESTDocuments.write(object, docID: docID, parent: parent, in: call.keyspace)
        return DocumentRESTAPI.json(
            ["id": .string(docID), "ok": true, "rev": .string(saved.revID.description)], status: .created,
            headers: [.eTag: "\"\(saved.revID)\""])
    }

    /// `?new_edits=false`: the body's `_rev` (and `_revisions`) stored as given (`RESTExistingRevisions`).
    private func putKeepingRevision(_ call: RESTCall, docID: String, object: JSONObject) async throws -> Response {
        if let id = object["_id"], id.stringValue != docID {
            throw RESTError.badRequest("the body's _id \(id) is not the document ID of the path, '\(docID)'")
        }
        let revision = try RESTExistingRevisions.revision(object, docID: docID)
        let revID = try await RESTExistingRevisions.store([(docID, .success(revision))], in: call.keyspace)[0].get()
        return DocumentRESTAPI.json(
            ["id": .string(docID), "ok": true, "rev": .string(revID.description)], status: .created,
            headers: [.eTag: "\"\(revID)\""])
    }

    private func create(_ call: RESTCall) async throws -> Response {
        let object = try await call.jsonObjectBody()
        let docID = object["_id"]?.stringValue ?? RESTDocuments.generatedID()
        let saved = try await RESTDocuments.write(object, docID: docID, parent: nil, in: call.keyspace)
        return DocumentRESTAPI.json(
            ["id": .string(docID), "ok": true, "rev": .string(saved.revID.description)],
            headers: [.eTag: "\"\(saved.revID)\""])
    }

    private func delete(_ call: RESTCall, docID: String) async throws -> Response {
        guard let parent = try await RESTRevisions.expectedRevision(call, body: nil, docID: docID) else {
            throw RESTError.conflict("Document update conflict: a rev (query or If-Match) is required to delete")
        }
        let saved = try await call.keyspace.database.delete(docID, parentRevID: parent, in: call.keyspace.collection)
        return DocumentRESTAPI.json(["id": .string(docID), "ok": true, "rev": .string(saved.revID.description)])
    }
}

/// Revision IDs in REST requests.
enum RESTRevisions {
    static func parse(_ text: String) throws(RESTError) -> RevisionID {
        do throws(InvalidRevisionID) {
            return try RevisionID(text)
        } catch {
            throw .badRequest(error.description)
        }
    }

    /// The revision a write to `docID` replaces: `?rev=`, `If-Match` or the body's `_rev`, which must agree. Each
    /// may be a rev-tree ID or, as Sync Gateway 4 accepts, a version (`<hex time>@<source>`), which must be the
    /// document's current version; otherwise the write conflicts.
    static func expectedRevision(_ call: RESTCall, body: JSONObject?, docID: String) async throws -> RevisionID? {
        guard let text = try expectedRevisionText(call, body: body) else { return nil }
        guard text.contains("@") else { return try parse(text) }
        let version: Version
        do throws(InvalidVersion) {
            version = try Version(text)
        } catch {
            throw RESTError.badRequest(error.description)
        }
        let keyspace = call.keyspace
        guard let document = try await keyspace.database.document(docID, in: keyspace.collection),
            document.vector?.current == version
        else {
            throw RESTError.conflict("Document update conflict: \(text) is not the document's current version")
        }
        return document.revID
    }

    private static func expectedRevisionText(_ call: RESTCall, body: JSONObject?) throws(RESTError) -> String? {
        var candidates: [String] = []
        if let rev = call.queryString("rev") { candidates.append(rev) }
        if let ifMatch = call.request.headers[.ifMatch] {
            candidates.append(ifMatch.trimmingCharacters(in: CharacterSet(charactersIn: "\" ")))
        }
        if let bodyRev = body?["_rev"] {
            guard let text = bodyRev.stringValue else {
                throw .badRequest("_rev must be a string, got \(bodyRev.typeName)")
            }
            candidates.append(text)
        }
        guard let first = candidates.first else { return nil }
        guard candidates.allSatisfy({ $0 == first }) else {
            throw .badRequest("the revision IDs in ?rev, If-Match and _rev differ")
        }
        return first
    }
}

/// Documents as REST clients see them: the stored body with `_id`, `_rev` and `_deleted` around it.
enum RESTDocuments {
    /// Top-level properties a client may send that are not stored in the body.
    static let metaProperties: Set<String> = ["_id", "_rev", "_cv", "_revisions", "_deleted"]

    /// `version`, the revision's current version when known, follows `_rev` as `_cv` (Sync Gateway 4's name).
    static func documentObject(
        docID: String, revID: RevisionID, version: Version? = nil, deleted: Bool, body: Data
    ) throws -> JSONObject {
        var object: JSONObject = ["_id": .string(docID), "_rev": .string(revID.description)]
        if let version { object["_cv"] = .string(version.description) }
        if deleted { object["_deleted"] = true }
        let stored: JSONValue
        do {
            stored = try JSONValue(parsing: Array(body))
        } catch {
            throw StoreError.corruptDatabase(path: docID, reason: "stored body is not JSON: \(error)")
        }
        for (key, value) in stored.objectValue ?? [:] where object[key] == nil {
            object[key] = value
        }
        return object
    }

    /// `_revisions` of `?revs=true`: the generation and the digests from the revision back to the oldest known.
    static func revisionsValue(_ keyspace: RESTKeyspace, docID: String, revID: RevisionID) async throws -> JSONValue {
        let ancestors = try await keyspace.database.revisionHistory(docID, revID: revID, in: keyspace.collection)
        let ids = ([revID] + ancestors).map { JSONValue.string($0.digest) }
        return ["start": .integer(Int(revID.generation)), "ids": .array(ids)]
    }

    /// The body to store from what a client sent; properties starting with `_` other than the known ones and
    /// `_attachments` are refused, as Sync Gateway refuses them.
    static func storedBody(_ object: JSONObject) throws(RESTError) -> (body: Data, deleted: Bool) {
        var body = JSONObject()
        var deleted = false
        for (key, value) in object {
            if key == "_deleted" {
                guard let flag = value.boolValue else {
                    throw .badRequest("_deleted must be a boolean, got \(value.typeName)")
                }
                deleted = flag
            } else if metaProperties.contains(key) {
                continue
            } else if key.hasPrefix("_") && key != "_attachments" {
                throw .badRequest("top-level property '\(key)' is reserved: user properties may not start with '_'")
            } else {
                body[key] = value
            }
        }
        return (Data(JSONValue.object(body).serialized), deleted)
    }

    /// Saves (or, with `_deleted: true`, deletes) one document as a new local revision.
    static func write(
        _ object: JSONObject, docID: String, parent: RevisionID?, in keyspace: RESTKeyspace
    ) async throws -> SavedRevision {
        let (body, deleted) = try storedBody(object)
        if deleted {
            guard let parent else {
                throw RESTError.conflict("Document update conflict: a rev is required to delete")
            }
            return try await keyspace.database.delete(docID, parentRevID: parent, in: keyspace.collection)
        }
        return try await keyspace.database.save(docID, body: body, parentRevID: parent, in: keyspace.collection)
    }

    /// 32 lowercase hex digits, as Sync Gateway generates document IDs.
    static func generatedID() -> String {
        UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
    }
}

extension DocumentDatabase {
    /// Counts of a collection that may not have been created yet (no document written): zero then.
    func collectionCountsIfPresent(_ collection: CollectionName) async throws -> (documents: Int, lastSequence: Int64) {
        do {
            return try await collectionCounts(in: collection)
        } catch StoreError.collectionNotFound {
            return (0, 0)
        }
    }
}
