import EdgeStore
import Foundation
import Hummingbird
import NIOCore
import ReplicationProtocol
import SyncIdentifiers
import SyncJSON

/// Many documents per request: `_bulk_docs`, `_all_docs`, `_bulk_get`, `_revs_diff`.
struct BulkDocumentsController: Sendable {
    let api: DocumentRESTAPI

    func addRoutes(to router: Router<BasicRequestContext>) {
        router.post("/{keyspace}/_bulk_docs") { request, context in
            await api.rest(request, context, writes: true) { call in try await bulkDocs(call) }
        }
        router.get("/{keyspace}/_all_docs") { request, context in
            await api.rest(request, context, writes: false) { call in
                try await allDocs(call, keys: try call.queryJSON("keys").map(Self.keyList))
            }
        }
        router.post("/{keyspace}/_all_docs") { request, context in
            await api.rest(request, context, writes: false) { call in
                let body = try await call.jsonObjectBody()
                return try await allDocs(call, keys: try body["keys"].map(Self.keyList))
            }
        }
        router.post("/{keyspace}/_bulk_get") { request, context in
            await api.rest(request, context, writes: false) { call in try await bulkGet(call) }
        }
        router.post("/{keyspace}/_revs_diff") { request, context in
            await api.rest(request, context, writes: false) { call in try await revsDiff(call) }
        }
    }

    private static func keyList(_ value: JSONValue) throws(RESTError) -> [String] {
        guard let list = value.arrayValue, list.allSatisfy({ $0.stringValue != nil }) else {
            throw .badRequest("keys must be a JSON array of document IDs")
        }
        return list.compactMap(\.stringValue)
    }

    /// Every document is checked before any is written, so a malformed entry fails the request and changes
    /// nothing; conflicts are reported per document, as Sync Gateway does.
    private func bulkDocs(_ call: RESTCall) async throws -> Response {
        let body = try await call.jsonObjectBody()
        let newEdits = try body["new_edits"].map { value throws(RESTError) in
            guard let flag = value.boolValue else {
                throw .badRequest("new_edits must be a boolean, got \(value.typeName)")
            }
            return flag
        }
        guard let docs = body["docs"]?.arrayValue else {
            throw RESTError.badRequest("the body needs a \"docs\" array")
        }
        if newEdits == false {
            return try await bulkDocsKeepingRevisions(call, docs: docs)
        }
        var writes: [NewRevision] = []
        writes.reserveCapacity(docs.count)
        for (index, doc) in docs.enumerated() {
            guard let object = doc.objectValue else {
                throw RESTError.badRequest("docs[\(index)] must be an object, got \(doc.typeName)")
            }
            if let id = object["_id"], id.stringValue == nil {
                throw RESTError.badRequest("docs[\(index)]._id must be a string")
            }
            do throws(RESTError) {
                let parent = try object["_rev"].map { value throws(RESTError) in
                    guard let text = value.stringValue else { throw .badRequest("_rev must be a string") }
                    return try RESTRevisions.parse(text)
                }
                let (body, deleted) = try RESTDocuments.storedBody(object)
                writes.append(
                    NewRevision(
                        docID: object["_id"]?.stringValue ?? RESTDocuments.generatedID(), body: body,
                        parentRevID: parent, deleted: deleted))
            } catch {
                throw RESTError.badRequest("docs[\(index)]: \(error.reason)")
            }
        }
        // One transaction for the whole request: one commit instead of one per document.
        let outcomes = try await call.keyspace.database.saveBatch(writes, in: call.keyspace.collection)
        var results: [JSONValue] = []
        results.reserveCapacity(writes.count)
        for (write, outcome) in zip(writes, outcomes) {
            switch outcome {
            case .success(let saved):
                results.append(["id": .string(write.docID), "rev": .string(saved.revID.description)])
            case .failure(let error):
                var restError = RESTError(storeError: error)
                if write.deleted, write.parentRevID == nil, case .conflict = error {
                    restError = .conflict("Document update conflict: a _rev is required to delete")
                }
                results.append([
                    "id": .string(write.docID), "error": .string(restError.error),
                    "reason": .string(restError.reason), "status": .integer(Int(restError.status.code)),
                ])
            }
        }
        return DocumentRESTAPI.json(.array(results), status: .created)
    }

    /// `new_edits: false`: each document keeps its `_rev` and `_revisions` (`RESTExistingRevisions`). As Sync
    /// Gateway answers it, a document without a usable history fails on its own with 400 while the others are
    /// stored; only a body that is not a list of objects fails the whole request.
    private func bulkDocsKeepingRevisions(_ call: RESTCall, docs: [JSONValue]) async throws -> Response {
        var entries: [(docID: String, revision: Result<ExistingRevision, RESTError>)] = []
        entries.reserveCapacity(docs.count)
        for (index, doc) in docs.enumerated() {
            guard let object = doc.objectValue else {
                throw RESTError.badRequest("docs[\(index)] must be an object, got \(doc.typeName)")
            }
            let docID = object["_id"]?.stringValue ?? ""
            entries.append(
                (
                    docID,
                    Result { () throws(RESTError) in
                        guard !docID.isEmpty else {
                            throw .badRequest("with new_edits=false every document needs its _id")
                        }
                        return try RESTExistingRevisions.revision(object, docID: docID)
                    }
                ))
        }
        let outcomes = try await RESTExistingRevisions.store(entries, in: call.keyspace)
        var results: [JSONValue] = []
        results.reserveCapacity(entries.count)
        for (entry, outcome) in zip(entries, outcomes) {
            var result: JSONObject = [:]
            if !entry.docID.isEmpty { result["id"] = .string(entry.docID) }
            switch outcome {
            case .success(let revID):
                result["rev"] = .string(revID.description)
            case .failure(let error):
                result["error"] = .string(error.error)
                result["reason"] = .string(error.reason)
                result["status"] = .integer(Int(error.status.code))
            }
            results.append(.object(result))
        }
        return DocumentRESTAPI.json(.array(results), status: .created)
    }

    /// As Sync Gateway's `_all_docs` (rest/bulk_api.go `handleAllDocs`, db/query.go `QueryAllDocs` in
    /// couchbase/sync_gateway): live documents ordered by ID in byte order (its N1QL `ORDER BY META().id`,
    /// SQLite's text order here), `startkey` and `endkey` both inclusive, given as JSON strings or plain text,
    /// an empty one meaning no bound; `limit=0` means no limit; `total_rows` counts the rows of the answer and
    /// `update_seq` is the database's last sequence. With `keys`, one row per key in the given order, deleted
    /// documents included. `descending` and `skip`, which Sync Gateway ignores, work as CouchDB's: descending
    /// swaps the roles of `startkey` (then the highest ID) and `endkey`.
    private func allDocs(_ call: RESTCall, keys: [String]?) async throws -> Response {
        let keyspace = call.keyspace
        let includeDocs = try call.queryFlag("include_docs")
        let descending = try call.queryFlag("descending")
        let skip = try call.queryInteger("skip") ?? 0
        let limit = try call.queryInteger("limit").flatMap { $0 == 0 ? nil : $0 } ?? .max
        let lastSequence = try await keyspace.database.collectionCountsIfPresent(keyspace.collection).lastSequence
        var rows: [JSONValue] = []
        if let keys {
            for key in keys.dropFirst(skip).prefix(limit) {
                guard let document = try await keyspace.database.documentIfCollectionExists(key, keyspace) else {
                    rows.append(["key": .string(key), "error": "not_found"])
                    continue
                }
                var value: JSONObject = ["rev": .string(document.revID.description)]
                if document.deleted { value["deleted"] = true }
                var row: JSONObject = ["id": .string(key), "key": .string(key), "value": .object(value)]
                if includeDocs {
                    row["doc"] =
                        document.deleted
                        ? .null
                        : .object(
                            try RESTDocuments.documentObject(
                                docID: key, revID: document.revID, deleted: false, body: document.body))
                }
                rows.append(.object(row))
            }
        } else {
            let range = DocumentRange(
                start: Self.keyParameter(call, "startkey", "start_key"),
                end: Self.keyParameter(call, "endkey", "end_key"),
                descending: descending, skip: skip, limit: limit)
            let listing: [DocumentListing]
            do {
                listing = try await keyspace.database.documents(in: keyspace.collection, range: range)
            } catch StoreError.collectionNotFound {
                listing = []
            }
            for entry in listing {
                var row: JSONObject = [
                    "id": .string(entry.docID), "key": .string(entry.docID),
                    "value": ["rev": .string(entry.revID.description)],
                ]
                if includeDocs,
                    let revision = try await keyspace.database.revision(
                        entry.docID, revID: entry.revID, in: keyspace.collection),
                    let body = revision.body
                {
                    row["doc"] = .object(
                        try RESTDocuments.documentObject(
                            docID: entry.docID, revID: entry.revID, deleted: false, body: body))
                }
                rows.append(.object(row))
            }
        }
        return DocumentRESTAPI.json([
            "rows": .array(rows), "total_rows": .integer(rows.count), "update_seq": .integer(Int(lastSequence)),
        ])
    }

    /// `startkey="a"` as CouchDB keys are JSON, or `startkey=a`: as Sync Gateway (`getJSONStringQuery`), a
    /// value that is not a JSON string is taken as it is written.
    private static func keyParameter(_ call: RESTCall, _ names: String...) -> String? {
        for name in names {
            guard let text = call.queryString(name) else { continue }
            let key = (try? JSONValue(parsing: Array(text.utf8)))?.stringValue ?? text
            return key.isEmpty ? nil : key
        }
        return nil
    }

    /// CouchDB's JSON form, `{"results": [{"id": …, "docs": [{"ok": doc} | {"error": {…}}]}]}`, or Sync
    /// Gateway's `multipart/mixed`, one part per requested document (`RESTMultipart`).
    private func bulkGet(_ call: RESTCall) async throws -> Response {
        let keyspace = call.keyspace
        let form = try RESTMultipart.form(of: call.request)
        let withHistory = try call.queryFlag("revs")
        let body = try await call.jsonObjectBody()
        guard let docs = body["docs"]?.arrayValue else {
            throw RESTError.badRequest("the body needs a \"docs\" array of {\"id\", \"rev\"}")
        }
        var requests: [(docID: String, revID: RevisionID?)] = []
        for (index, doc) in docs.enumerated() {
            guard let docID = doc.objectValue?["id"]?.stringValue else {
                throw RESTError.badRequest("docs[\(index)] needs an \"id\" string")
            }
            let rev = try doc.objectValue?["rev"].map { value throws(RESTError) in
                guard let text = value.stringValue else { throw .badRequest("docs[\(index)].rev must be a string") }
                return try RESTRevisions.parse(text)
            }
            requests.append((docID, rev))
        }
        var found: [Result<JSONObject, RESTError>] = []
        for request in requests {
            var revID = request.revID
            if revID == nil {
                revID = try await keyspace.database.documentIfCollectionExists(request.docID, keyspace)?.revID
            }
            guard let revID,
                let revision = try? await keyspace.database.revision(
                    request.docID, revID: revID, in: keyspace.collection),
                let stored = revision.body
            else {
                found.append(.failure(.notFound("missing")))
                continue
            }
            var object = try RESTDocuments.documentObject(
                docID: request.docID, revID: revID, deleted: revision.deleted, body: stored)
            if withHistory {
                object["_revisions"] = try await RESTDocuments.revisionsValue(
                    keyspace, docID: request.docID, revID: revID)
            }
            found.append(.success(object))
        }
        func errorObject(_ request: (docID: String, revID: RevisionID?), _ error: RESTError) -> JSONObject {
            var object: JSONObject = [
                "id": .string(request.docID), "error": .string(error.error), "reason": .string(error.reason),
                "status": .integer(Int(error.status.code)),
            ]
            if let revID = request.revID { object["rev"] = .string(revID.description) }
            return object
        }
        switch form {
        case .multipartMixed:
            return RESTMultipart.response(
                zip(requests, found).map { request, outcome in
                    switch outcome {
                    case .success(let object): RESTMultipart.Part(body: .object(object), isError: false)
                    case .failure(let error):
                        RESTMultipart.Part(body: .object(errorObject(request, error)), isError: true)
                    }
                })
        case .json:
            let results: [JSONValue] = zip(requests, found).map { request, outcome in
                let entry: JSONValue =
                    switch outcome {
                    case .success(let object): ["ok": .object(object)]
                    case .failure(let error): ["error": .object(errorObject(request, error))]
                    }
                return ["id": .string(request.docID), "docs": [entry]]
            }
            return DocumentRESTAPI.json(["results": .array(results)])
        }
    }

    private func revsDiff(_ call: RESTCall) async throws -> Response {
        let body = try await call.jsonObjectBody()
        var queries: [RevisionQuery] = []
        for (docID, value) in body {
            guard let list = value.arrayValue else {
                throw RESTError.badRequest("revisions of '\(docID)' must be a JSON array")
            }
            var revIDs: [RevisionID] = []
            for item in list {
                guard let text = item.stringValue else {
                    throw RESTError.badRequest("revisions of '\(docID)' must be strings")
                }
                revIDs.append(try RESTRevisions.parse(text))
            }
            queries.append(RevisionQuery(docID: docID, revIDs: revIDs))
        }
        let diffs = try await call.keyspace.database.revisionDiffs(queries, in: call.keyspace.collection)
        var answer = JSONObject()
        for diff in diffs {
            let diff = try diff.get()
            guard !diff.missing.isEmpty else { continue }
            var entry: JSONObject = ["missing": .array(diff.missing.map { .string($0.description) })]
            if !diff.possibleAncestors.isEmpty {
                entry["possible_ancestors"] = .array(diff.possibleAncestors.map { .string($0.description) })
            }
            answer[diff.docID] = .object(entry)
        }
        return DocumentRESTAPI.json(.object(answer))
    }
}

extension DocumentDatabase {
    func documentIfCollectionExists(_ docID: String, _ keyspace: RESTKeyspace) async throws -> Document? {
        do {
            return try await document(docID, in: keyspace.collection)
        } catch StoreError.collectionNotFound {
            return nil
        }
    }
}
