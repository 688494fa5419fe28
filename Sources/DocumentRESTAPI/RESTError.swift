import EdgeStore
import Foundation
import Hummingbird
import NIOCore
import ReplicationProtocol
import SyncJSON

/// A REST request that failed: the status and the `{"error": …, "reason": …}` body Sync Gateway would answer.
package struct RESTError: Error, Sendable {
    package var status: HTTPResponse.Status
    package var error: String
    package var reason: String
    package var headers: HTTPFields = [:]

    package init(status: HTTPResponse.Status, error: String, reason: String, headers: HTTPFields = [:]) {
        self.status = status
        self.error = error
        self.reason = reason
        self.headers = headers
    }

    var response: Response {
        var headers = headers
        headers[.contentType] = "application/json"
        let body: JSONValue = ["error": .string(error), "reason": .string(reason)]
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: body.serialized)))
    }

    static func badRequest(_ reason: String) -> RESTError {
        RESTError(status: .badRequest, error: "Bad Request", reason: reason)
    }

    static func notFound(_ reason: String) -> RESTError {
        RESTError(status: .notFound, error: "not_found", reason: reason)
    }

    static func conflict(_ reason: String) -> RESTError {
        RESTError(status: .conflict, error: "conflict", reason: reason)
    }

    package static let loginRequired = RESTError(
        status: .unauthorized, error: "Unauthorized", reason: "Login required",
        headers: [.wwwAuthenticate: "Basic charset=\"UTF-8\""])

    static let readOnly = RESTError(
        status: .forbidden, error: "Forbidden",
        reason: "this listener's REST API is read-only (set rest_api = true to allow writes)")

    static let methodNotAllowed = RESTError(
        status: .methodNotAllowed, error: "Method Not Allowed", reason: "this method is not allowed on this path")

    static func bodyTooLarge(limit: Int) -> RESTError {
        RESTError(
            status: .contentTooLarge, error: "Request Entity Too Large",
            reason: "the request body exceeds the listener's limit of \(limit) bytes (rest_max_body_size)")
    }

    var isServerFault: Bool { status.code >= 500 }
}

extension RESTError {
    /// What a store failure means to a REST client. Failures that are the server's own are logged by the caller
    /// and reported without their details.
    init(storeError: StoreError) {
        let reason =
            switch storeError {
            case .invalidDocumentID(let docID, let reason): "invalid document ID '\(docID)': \(reason)"
            case .invalidRevisionID(let error): error.description
            case .invalidJSON(let reason): "the document body is not valid JSON: \(reason)"
            case .invalidRevisionHistory(_, let reason): "invalid revision history: \(reason)"
            case .conflict(_, let currentRevID):
                currentRevID == nil ? "Document revision conflict" : "Document update conflict"
            case .localRevisionMismatch: "Document update conflict"
            // A missing collection was checked against the listener's configuration before the store was asked:
            // it is served but nothing was written to it yet.
            case .documentNotFound, .revisionNotFound, .blobNotFound, .collectionNotFound: "missing"
            case .blobDigestMismatch(let expected, let actual):
                "blob digest mismatch: expected \(expected), got \(actual)"
            case .invalidDatabaseName, .databaseNotFound: "no such database"
            case .invalidConflictResolution(_, let reason): reason
            case .cancelled: "the request was cancelled"
            case .diskFull: "disk full"
            case .blobWriterClosed, .corruptDatabase, .io, .sqlite: "storage failure"
            }
        let status = HTTPResponse.Status(code: storeError.httpStatus)
        self = RESTError(status: status, error: Self.errorName(for: status), reason: reason)
    }

    /// The `error` member Sync Gateway puts beside the reason for each status a store failure maps to.
    private static func errorName(for status: HTTPResponse.Status) -> String {
        switch status {
        case .notFound: "not_found"
        case .conflict: "conflict"
        default: status.reasonPhrase
        }
    }
}
