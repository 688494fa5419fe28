import EdgeConfig
import EdgeStore
import Foundation

/// The identity of each upstream as the local database knows it. Checkpoints are keyed by it, never by the URL, so
/// an upstream reached at a new address resumes where it stopped. It is the configured `remote_uuid`, else one
/// generated on first use and kept in a local document of the replicated database.
package enum UpstreamRemoteUUID {
    static func documentID(upstream: String) -> String {
        "upstream-remote-uuid/\(upstream)"
    }

    /// The UUID the upstream's checkpoints are keyed by, generating and storing one if there is none yet.
    package static func resolve(for settings: UpstreamSettings, in database: DocumentDatabase) async throws -> String {
        if let configured = settings.remoteUUID { return configured }
        return try await resolve(upstream: settings.name, in: database)
    }

    /// The stored UUID of the upstream named `upstream`, generating and storing one if there is none yet.
    package static func resolve(upstream: String, in database: DocumentDatabase) async throws -> String {
        if let stored = try await stored(upstream: upstream, in: database) { return stored }
        let uuid = UUID().uuidString.lowercased()
        try await database.putLocalDocument(
            documentID(upstream: upstream), body: try JSONSerialization.data(withJSONObject: ["uuid": uuid]),
            expectedRevID: nil)
        return uuid
    }

    /// The generated UUID kept for `upstream`, if any.
    package static func stored(upstream: String, in database: DocumentDatabase) async throws -> String? {
        guard let document = try await database.localDocument(documentID(upstream: upstream)),
            let object = try? JSONSerialization.jsonObject(with: document.body) as? [String: String]
        else { return nil }
        return object["uuid"]
    }

    /// Forgets the generated UUID, so the next run treats the upstream as new: it starts from no checkpoint and
    /// compares everything again (nothing already on the other side is sent twice, but it is all checked).
    /// Returns the forgotten UUID.
    @discardableResult
    package static func reset(upstream: String, in database: DocumentDatabase) async throws -> String? {
        let documentID = documentID(upstream: upstream)
        guard let document = try await database.localDocument(documentID) else { return nil }
        let previous = try await stored(upstream: upstream, in: database)
        try await database.deleteLocalDocument(documentID, expectedRevID: document.revID)
        return previous
    }
}
