import Foundation
import Hummingbird
import NIOCore
import ReplicationProtocol
import SyncJSON

/// The two forms of the answers that hold several revisions, `_bulk_get` and `GET …?open_revs=`.
///
/// Sync Gateway (rest/bulk_api.go `handleBulkGet`, rest/doc_api.go `handleGetDoc`, `writeMultipart` and
/// `requestAccepts` in rest/handler.go) writes them as `multipart/mixed`, one `application/json` part per
/// revision, `error="true"` on the parts that report a failure, whenever the `Accept` header is absent or names
/// `multipart/` or `*/*`; otherwise `open_revs` falls back to a JSON array and `_bulk_get` answers 406.
/// CouchDB answers both as JSON unless `multipart/mixed` is asked for. Here an `Accept` naming `multipart/`
/// gets Sync Gateway's multipart form; one that accepts JSON (or no `Accept` at all, as curl and dashboards send)
/// gets the JSON form, which a `_bulk_get` of Sync Gateway never gives; anything else is a 406 that says which
/// forms exist. Attachments stay stubs in both forms (`attachments=true` is not served).
enum RESTMultipart {
    enum Form {
        case json
        case multipartMixed
    }

    struct Part {
        var body: JSONValue
        var isError: Bool
    }

    static func form(of request: Request) throws(RESTError) -> Form {
        let accept = request.headers[values: .accept].joined(separator: ",").lowercased()
        if accept.contains("multipart/") { return .multipartMixed }
        if accept.isEmpty || accept.contains("application/json") || accept.contains("*/*")
            || accept.contains("application/*")
        {
            return .json
        }
        throw RESTError(
            status: .notAcceptable, error: "Not Acceptable",
            reason: "this answer is application/json, or multipart/mixed when the Accept header asks for multipart/")
    }

    /// `multipart/mixed` as RFC 2046 frames it; each part carries `X-Doc-ID` and `X-Rev-ID` when its body names
    /// them, as Sync Gateway's parts do.
    static func response(_ parts: [Part]) -> Response {
        let boundary = UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        var body = ByteBuffer()
        for part in parts {
            body.writeString("--\(boundary)\r\n")
            body.writeString("Content-Type: application/json\(part.isError ? "; error=\"true\"" : "")\r\n")
            // Header values cannot hold line breaks: an ID with control characters only goes in the JSON.
            if let object = part.body.objectValue, let docID = object["_id"]?.stringValue,
                !docID.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F })
            {
                body.writeString("X-Doc-ID: \(docID)\r\n")
                if let revID = object["_rev"]?.stringValue { body.writeString("X-Rev-ID: \(revID)\r\n") }
            }
            body.writeString("\r\n")
            body.writeBytes(part.body.serialized)
            body.writeString("\r\n")
        }
        body.writeString("--\(boundary)--\r\n")
        return Response(
            status: .ok, headers: [.contentType: "multipart/mixed; boundary=\"\(boundary)\""],
            body: .init(byteBuffer: body))
    }
}
