import Foundation
import ReplicationProtocol
import SyncJSON
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// HTTP requests to a listener's REST API, as curl would send them.
package struct RESTClient {
    package let port: Int
    package var credentials: String? = nil

    package init(port: Int, credentials: String? = nil) {
        self.port = port
        self.credentials = credentials
    }

    package struct Reply {
        package var status: Int
        package var headers: [String: String]
        package var body: Data

        package var json: JSONValue? { try? JSONValue(parsing: Array(body)) }
        package var object: JSONObject? { json?.objectValue }
        package var text: String { String(decoding: body, as: UTF8.self) }
        /// Sync Gateway's error token and reason.
        package var error: (error: String?, reason: String?) {
            (object?["error"]?.stringValue, object?["reason"]?.stringValue)
        }
    }

    package func send(
        _ method: String, _ path: String, body: Data? = nil, headers: [String: String] = [:],
        timeout: TimeInterval = 30
    ) async throws -> Reply {
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)\(path)")!)
        request.httpMethod = method
        request.timeoutInterval = timeout
        request.httpBody = body
        if body != nil { request.setValue("application/json", forHTTPHeaderField: "Content-Type") }
        if let credentials {
            request.setValue(
                "Basic " + Data(credentials.utf8).base64EncodedString(), forHTTPHeaderField: "Authorization")
        }
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let (data, response) = try await URLSession.shared.data(for: request)
        let http = try #require(response as? HTTPURLResponse)
        var replyHeaders: [String: String] = [:]
        for (name, value) in http.allHeaderFields {
            replyHeaders[String(describing: name).lowercased()] = String(describing: value)
        }
        return Reply(status: http.statusCode, headers: replyHeaders, body: data)
    }

    package func send(_ method: String, _ path: String, json: JSONValue, headers: [String: String] = [:]) async throws
        -> Reply
    {
        try await send(method, path, body: Data(json.serialized), headers: headers)
    }

    package func get(_ path: String, timeout: TimeInterval = 30) async throws -> Reply {
        try await send("GET", path, timeout: timeout)
    }
}
