import EdgeStore
import Foundation
import Hummingbird
import NIOCore
import ReplicationProtocol
import SyncIdentifiers
import SyncJSON

/// `GET` and `PUT /{keyspace}/{docid}/{name}`: a document's attachment, streamed to and from the blob store.
///
/// A blob written here becomes a new revision whose `_attachments` entry carries the digest the replication
/// protocol uses (`sha1-<base64>`), its length and content type, as a stub: Couchbase Lite pulls it as a blob
/// (`getAttachment` by digest). Reading finds the entry in `_attachments`, or a Couchbase Lite blob dictionary
/// stored under the top-level property `name`, so blobs pushed by apps can be downloaded too.
struct BlobsController: Sendable {
    let api: DocumentRESTAPI

    func addRoutes(to router: Router<BasicRequestContext>) {
        router.get("/{keyspace}/{docid}/{attachment}") { request, context in
            await api.rest(request, context, writes: false) { call in
                try await get(
                    call, docID: try DocumentsController.docID(context),
                    name: try DocumentsController.docID(context, parameter: "attachment"))
            }
        }
        router.put("/{keyspace}/{docid}/{attachment}") { request, context in
            await api.rest(request, context, writes: true) { call in
                try await put(
                    call, docID: try DocumentsController.docID(context),
                    name: try DocumentsController.docID(context, parameter: "attachment"))
            }
        }
    }

    private func get(_ call: RESTCall, docID: String, name: String) async throws -> Response {
        let keyspace = call.keyspace
        guard let document = try await keyspace.database.documentIfCollectionExists(docID, keyspace),
            !document.deleted
        else {
            throw RESTError.notFound("missing")
        }
        let body = try JSONValue(parsing: Array(document.body)).objectValue ?? [:]
        let entry =
            body[BlobReference.attachmentsKey]?.objectValue?[name]?.objectValue
            ?? body[name]?.objectValue.flatMap { $0[BlobReference.typeKey] == "blob" ? $0 : nil }
        guard let entry, let digestText = entry["digest"]?.stringValue else {
            throw RESTError.notFound("document '\(docID)' has no attachment '\(name)'")
        }
        let digest: BlobDigest
        do throws(InvalidBlobDigest) {
            digest = try BlobDigest(digestText)
        } catch {
            throw RESTError.badRequest("invalid blob digest '\(error.text)'")
        }
        let blobs = keyspace.database.blobs
        guard let length = blobs.length(of: digest) else {
            throw RESTError.notFound("the content of attachment '\(name)' is not stored here")
        }
        let contentType = entry["content_type"]?.stringValue ?? "application/octet-stream"
        let responseBody = ResponseBody(contentLength: Int(length)) { writer in
            for try await chunk in try blobs.chunks(of: digest) {
                try await writer.write(ByteBuffer(bytes: chunk))
            }
            try await writer.finish(nil)
        }
        return Response(
            status: .ok,
            headers: [.contentType: contentType, .eTag: "\"\(digestText)\""],
            body: responseBody)
    }

    /// Streams the body into the blob store (never whole in memory), then adds the attachment to a new
    /// revision on top of `rev`; without `rev` the document must not exist yet and is created around it.
    private func put(_ call: RESTCall, docID: String, name: String) async throws -> Response {
        let keyspace = call.keyspace
        let parent = try await RESTRevisions.expectedRevision(call, body: nil, docID: docID)
        if let length = call.request.headers[.contentLength].flatMap(Int.init), length > call.maxBodySize {
            throw RESTError.bodyTooLarge(limit: call.maxBodySize)
        }
        let writer = try keyspace.database.blobs.makeWriter()
        var received = 0
        do {
            for try await buffer in call.request.body {
                received += buffer.readableBytes
                guard received <= call.maxBodySize else { throw RESTError.bodyTooLarge(limit: call.maxBodySize) }
                try writer.append(Data(buffer.readableBytesView))
            }
        } catch {
            writer.cancel()
            throw error
        }
        let digest = try writer.finish()

        var body: JSONObject = [:]
        if let parent {
            guard let current = try await keyspace.database.revision(docID, revID: parent, in: keyspace.collection),
                let stored = current.body
            else {
                throw RESTError.conflict("Document update conflict")
            }
            body = try JSONValue(parsing: Array(stored)).objectValue ?? [:]
        }
        var attachments = body[BlobReference.attachmentsKey]?.objectValue ?? [:]
        attachments[name] = [
            "content_type": .string(call.request.headers[.contentType] ?? "application/octet-stream"),
            "digest": .string(digest.description),
            "length": .integer(received),
            "revpos": .integer(Int((parent?.generation ?? 0) + 1)),
            "stub": true,
        ]
        body[BlobReference.attachmentsKey] = .object(attachments)
        let saved = try await keyspace.database.save(
            docID, body: Data(JSONValue.object(body).serialized), parentRevID: parent, in: keyspace.collection)
        return DocumentRESTAPI.json(
            ["id": .string(docID), "ok": true, "rev": .string(saved.revID.description)], status: .created,
            headers: [.eTag: "\"\(saved.revID)\""])
    }
}
