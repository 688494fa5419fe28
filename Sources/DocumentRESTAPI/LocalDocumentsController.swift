import EdgeStore
import Foundation
import Hummingbird
import NIOCore
import ReplicationProtocol
import SyncJSON

/// `GET|PUT|DELETE /{keyspace}/_local/{id}`: documents that never replicate, such as a tool's checkpoints.
/// Their revisions are the `<n>-cc` counters the replication checkpoints use.
struct LocalDocumentsController: Sendable {
    let api: DocumentRESTAPI

    func addRoutes(to router: Router<BasicRequestContext>) {
        router.get("/{keyspace}/_local/{localid}") { request, context in
            await api.rest(request, context, writes: false) { call in
                try await get(call, id: try DocumentsController.docID(context, parameter: "localid"))
            }
        }
        router.put("/{keyspace}/_local/{localid}") { request, context in
            await api.rest(request, context, writes: true) { call in
                try await put(call, id: try DocumentsController.docID(context, parameter: "localid"))
            }
        }
        router.delete("/{keyspace}/_local/{localid}") { request, context in
            await api.rest(request, context, writes: true) { call in
                try await delete(call, id: try DocumentsController.docID(context, parameter: "localid"))
            }
        }
    }

    private func get(_ call: RESTCall, id: String) async throws -> Response {
        guard let local = try await call.keyspace.database.localDocument(id, in: call.keyspace.collection) else {
            throw RESTError.notFound("missing")
        }
        var object: JSONObject = ["_id": .string("_local/" + id), "_rev": .string(local.revID)]
        let body = (try? JSONValue(parsing: Array(local.body)))?.objectValue ?? [:]
        for (key, value) in body where object[key] == nil {
            object[key] = value
        }
        return DocumentRESTAPI.json(.object(object))
    }

    private func put(_ call: RESTCall, id: String) async throws -> Response {
        var object = try await call.jsonObjectBody()
        var expected = call.queryString("rev")
        if let bodyRev = object["_rev"] {
            guard let text = bodyRev.stringValue else { throw RESTError.badRequest("_rev must be a string") }
            guard expected == nil || expected == text else {
                throw RESTError.badRequest("the revision IDs in ?rev and _rev differ")
            }
            expected = text
        }
        object["_rev"] = nil
        object["_id"] = nil
        let rev = try await call.keyspace.database.putLocalDocument(
            id, body: Data(JSONValue.object(object).serialized), expectedRevID: expected, in: call.keyspace.collection)
        return DocumentRESTAPI.json(
            ["id": .string("_local/" + id), "ok": true, "rev": .string(rev)], status: .created)
    }

    private func delete(_ call: RESTCall, id: String) async throws -> Response {
        try await call.keyspace.database.deleteLocalDocument(
            id, expectedRevID: call.queryString("rev"), in: call.keyspace.collection)
        return DocumentRESTAPI.json(["id": .string("_local/" + id), "ok": true])
    }
}
