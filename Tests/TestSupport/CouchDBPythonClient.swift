import Foundation
import SyncJSON

/// python-couchdb 1.2, a CouchDB client library as applications use it, run through python3 against a gateway's
/// REST API: an independent check that the API answers as CouchDB and Sync Gateway do (it opens a database with
/// `HEAD /db` and asks whether a document exists with `HEAD /db/doc`).
package enum CouchDBPythonClient {
    package static let unavailableReason =
        "needs python3 with python-couchdb (pip install couchdb; scripts/dev test installs it)"

    package static let isAvailable: Bool =
        (try? runExternalToolBlocking("python3", ["-c", "import couchdb"]))?.status == 0

    package struct ScriptFailed: Error, CustomStringConvertible {
        package let description: String
    }

    /// Runs `script` with `server` bound to a `couchdb.Server` for `url` (credentials in it); the script sets
    /// `result` to something JSON can hold, which is returned. On a thread of its own, so that the gateway under
    /// test keeps the concurrency pool while the client waits for it.
    package static func run(_ script: String, url: String) async throws -> JSONValue {
        let program = """
            import json, sys, couchdb
            server = couchdb.Server(sys.argv[1])
            \(script)
            json.dump(result, sys.stdout)
            """
        let outcome = try await runExternalTool("python3", ["-c", program, url])
        guard outcome.status == 0 else {
            throw ScriptFailed(description: "python-couchdb failed: \(outcome.error)")
        }
        return try JSONValue(parsing: Array(outcome.output.utf8))
    }
}
