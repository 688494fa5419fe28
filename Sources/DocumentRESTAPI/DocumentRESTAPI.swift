import EdgeStore
import Foundation
import Hummingbird
import Logging
import NIOCore
import SyncIdentifiers
import SyncJSON

/// The server a `DocumentRESTAPI` is mounted on: who may call it, and which databases and collections it serves.
package protocol RESTHost: Sendable {
    /// When the server started, for `instance_start_time`.
    var startTime: Date { get }
    /// The collections served, by database name; a database that is not a key is not served.
    var servedCollections: [String: [CollectionName]] { get }
    /// Checks a request's credentials as the server's own routes do; throws the refusal to answer.
    func authenticateREST(_ headers: HTTPFields) async throws(RESTError)
    /// The served database `name`, opened.
    func openServedDatabase(_ name: String) async throws(RESTError) -> DocumentDatabase
}

/// The CouchDB-style document REST API, as Sync Gateway's public port answers it: documents, changes, bulk
/// routes, local documents, blobs and its own OpenAPI description (`Resources/openapi.json`). A server mounts
/// it on its router; every route authenticates through the host first.
public struct DocumentRESTAPI: Sendable {
    /// How far the API reaches.
    package enum Access: Sendable {
        case readOnly
        case readWrite
    }

    public struct Configuration: Sendable {
        package var access: Access
        /// The largest request body in bytes; bigger ones get 413 and change nothing.
        package var maxBodySize: Int

        package init(access: Access, maxBodySize: Int) {
            self.access = access
            self.maxBodySize = maxBodySize
        }
    }

    let host: any RESTHost
    let configuration: Configuration
    let logger: Logger

    package init(host: any RESTHost, configuration: Configuration, logger: Logger) {
        self.host = host
        self.configuration = configuration
        self.logger = logger
    }

    /// Adds every route of the API to `router`.
    package func addRoutes(to router: Router<BasicRequestContext>) {
        DocumentsController(api: self).addRoutes(to: router)
        ChangesController(api: self).addRoutes(to: router)
        BulkDocumentsController(api: self).addRoutes(to: router)
        LocalDocumentsController(api: self).addRoutes(to: router)
        BlobsController(api: self).addRoutes(to: router)
        OpenAPIController(api: self).addRoutes(to: router)
    }

    /// Runs a REST handler after the host's authentication, the keyspace lookup and, for writes, the access
    /// check; every failure becomes Sync Gateway's error body. Nothing is read from the request body before
    /// those checks pass.
    func rest(
        _ request: Request, _ context: BasicRequestContext, writes: Bool,
        _ handler: @Sendable (RESTCall) async throws -> Response
    ) async -> Response {
        do {
            try await host.authenticateREST(request.headers)
            let keyspace = try await keyspace(context.parameters.get("keyspace"))
            if writes, configuration.access != .readWrite {
                throw RESTError.readOnly
            }
            return try await handler(
                RESTCall(request: request, keyspace: keyspace, maxBodySize: configuration.maxBodySize))
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

    /// Resolves a `{keyspace}` path parameter to a served database and collection.
    func keyspace(_ parameter: String?) async throws(RESTError) -> RESTKeyspace {
        let text = parameter.map { $0.removingPercentEncoding ?? $0 } ?? ""
        guard let parsed = RESTKeyspace.parse(text), let served = host.servedCollections[parsed.database] else {
            throw .notFound("no such database or keyspace '\(text)'")
        }
        let databaseName = parsed.database
        var collection = CollectionName.default
        if let collectionParts = parsed.collection {
            guard let named = try? CollectionName(scope: collectionParts.scope, name: collectionParts.name),
                served.contains(named)
            else {
                throw .notFound("keyspace '\(text)' not found: database '\(databaseName)' has no such collection")
            }
            collection = named
        } else if !served.contains(.default) {
            throw .notFound("keyspace '\(text)' not found: database '\(databaseName)' has no default collection")
        }
        let database = try await host.openServedDatabase(databaseName)
        return RESTKeyspace(database: database, collection: collection, text: text)
    }

    /// A JSON response, as every route of the API and of the listener it is mounted on answers.
    package static func json(_ value: JSONValue, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:])
        -> Response
    {
        var headers = headers
        headers[.contentType] = "application/json"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: value.serialized)))
    }
}

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
