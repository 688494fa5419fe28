import EdgeConfig
import EdgeStore
import Foundation
import Hummingbird
import NIOCore
import ReplicationProtocol
import SyncIdentifiers
import SyncJSON

/// One authenticated REST request on a served keyspace, with the helpers its controller needs.
struct RESTCall: Sendable {
    let request: Request
    let keyspace: RESTKeyspace
    let maxBodySize: Int

    func queryString(_ name: String) -> String? {
        request.uri.queryParameters[name[...]].map(String.init)
    }

    /// `true`/`false` query flags; anything else is a 400, so that a typo is not silently ignored.
    func queryFlag(_ name: String) throws(RESTError) -> Bool {
        guard let text = queryString(name) else { return false }
        switch text {
        case "true": return true
        case "false": return false
        default: throw .badRequest("query parameter '\(name)' must be true or false, got '\(text)'")
        }
    }

    func queryInteger(_ name: String, range: ClosedRange<Int> = 0...Int.max) throws(RESTError) -> Int? {
        guard let text = queryString(name) else { return nil }
        guard let value = Int(text), range.contains(value) else {
            throw .badRequest("query parameter '\(name)' must be an integer in \(range), got '\(text)'")
        }
        return value
    }

    /// A query parameter holding JSON, as `keys`, `startkey` and `doc_ids` are in CouchDB.
    func queryJSON(_ name: String) throws(RESTError) -> JSONValue? {
        guard let text = queryString(name) else { return nil }
        do {
            return try JSONValue(parsing: text)
        } catch {
            throw .badRequest("query parameter '\(name)' is not valid JSON: \(error)")
        }
    }

    /// The request body, refused with 413 beyond the listener's limit before more of it is read.
    func bodyBytes() async throws(RESTError) -> ByteBuffer {
        if let length = request.headers[.contentLength].flatMap(Int.init), length > maxBodySize {
            throw .bodyTooLarge(limit: maxBodySize)
        }
        do {
            return try await request.body.collect(upTo: maxBodySize)
        } catch is NIOTooManyBytesError {
            throw .bodyTooLarge(limit: maxBodySize)
        } catch {
            throw .badRequest("the request body could not be read: \(error)")
        }
    }

    /// The body as JSON of the expected type.
    func jsonBody() async throws(RESTError) -> JSONValue {
        let bytes = try await bodyBytes()
        guard bytes.readableBytes > 0 else {
            throw .badRequest("the request needs a JSON body")
        }
        do {
            return try JSONValue(parsing: Array(bytes.readableBytesView))
        } catch {
            throw .badRequest("Bad JSON: \(error)")
        }
    }

    func jsonObjectBody() async throws(RESTError) -> JSONObject {
        let body = try await jsonBody()
        guard let object = body.objectValue else {
            throw .badRequest("the body must be a JSON object, got \(body.typeName)")
        }
        return object
    }
}

extension SyncListener {
    /// The REST routes on this listener; none when `rest_api = false`.
    func addRESTRoutes(to router: Router<BasicRequestContext>) {
        guard settings.restAPI != .off else { return }
        DocumentsController(listener: self).addRoutes(to: router)
        ChangesController(listener: self).addRoutes(to: router)
        BulkDocumentsController(listener: self).addRoutes(to: router)
        LocalDocumentsController(listener: self).addRoutes(to: router)
        BlobsController(listener: self).addRoutes(to: router)
        OpenAPIController(listener: self).addRoutes(to: router)
    }

    /// Runs a REST handler after the listener's authentication, the keyspace lookup and, for writes, the
    /// access check; every failure becomes Sync Gateway's error body. Nothing is read from the request body
    /// before those checks pass.
    func rest(
        _ request: Request, _ context: BasicRequestContext, writes: Bool,
        _ handler: @Sendable (RESTCall) async throws -> Response
    ) async -> Response {
        do {
            do throws(SyncListener.Refusal) {
                try await authenticate(request.headers)
            } catch {
                throw RESTError(authenticationRefusal: error)
            }
            let keyspace = try await restKeyspace(context.parameters.get("keyspace"))
            if writes, settings.restAPI != .readWrite {
                throw RESTError.readOnly
            }
            return try await handler(RESTCall(request: request, keyspace: keyspace, maxBodySize: settings.restMaxBodySize))
        } catch let error as RESTError {
            return error.response
        } catch let error as StoreError {
            let restError = RESTError(storeError: error)
            if restError.isServerFault {
                logger.error("REST request failed", metadata: ["path": "\(request.uri.path)", "error": "\(error)"])
            }
            return restError.response
        } catch {
            logger.error("REST request failed", metadata: ["path": "\(request.uri.path)", "error": "\(error)"])
            return RESTError(status: .internalServerError, error: "Internal Server Error", reason: "\(error)").response
        }
    }

    func restKeyspace(_ parameter: String?) async throws(RESTError) -> RESTKeyspace {
        let text = parameter.map { $0.removingPercentEncoding ?? $0 } ?? ""
        guard let parsed = RESTKeyspace.parse(text), settings.databases.contains(parsed.database) else {
            throw .notFound("no such database or keyspace '\(text)'")
        }
        let databaseName = parsed.database
        let collectionParts = parsed.collection
        var collection = CollectionName.default
        if let collectionParts {
            guard let named = try? CollectionName(scope: collectionParts.scope, name: collectionParts.name),
                servedCollections[databaseName]?.contains(named) == true
            else {
                throw .notFound("keyspace '\(text)' not found: database '\(databaseName)' has no such collection")
            }
            collection = named
        } else if servedCollections[databaseName]?.contains(.default) != true {
            throw .notFound("keyspace '\(text)' not found: database '\(databaseName)' has no default collection")
        }
        let database: DocumentDatabase
        do throws(Refusal) {
            database = try await servedDatabase(databaseName)
        } catch {
            throw RESTError(status: error.status, error: "Internal Server Error", reason: error.message)
        }
        return RESTKeyspace(database: database, collection: collection, text: text)
    }

    static func restJSON(_ value: JSONValue, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) -> Response {
        var headers = headers
        headers[.contentType] = "application/json"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: value.serialized)))
    }
}
