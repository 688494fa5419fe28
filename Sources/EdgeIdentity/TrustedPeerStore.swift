import Foundation

/// Certificates the operator chose to trust with `edge-gateway trust add`, each pinned by its SHA-256
/// fingerprint for the endpoint (`host:port`) it was seen at: trust on first use, or taken from a pairing payload.
///
/// An upstream with `server_trust = "trust-store"` is held to the pin recorded for its URL's endpoint. The file is
/// `trusted-peers.json` in the data directory, replaced atomically, readable by its owner only, since it decides
/// whom the gateway will send data to.
package struct TrustedPeerStore: Sendable {
    package struct Entry: Codable, Sendable, Equatable {
        /// `host:port`, the host lowercased and an IPv6 literal in brackets.
        package var endpoint: String
        /// Uppercase colon-separated hex, as printed by `openssl x509 -fingerprint -sha256`.
        package var sha256: String
        /// Where the pin came from, for `trust list`: a node name from a pairing payload, or the certificate's
        /// subject.
        package var label: String
        package var addedAt: Date

        package init(endpoint: String, sha256: CertificateFingerprint, label: String, addedAt: Date = Date()) {
            self.endpoint = endpoint
            self.sha256 = sha256.colonHex
            self.label = label
            self.addedAt = addedAt
        }
    }

    package static let fileName = "trusted-peers.json"

    package let path: String

    package init(dataDirectory: String) {
        path = (dataDirectory as NSString).appendingPathComponent(Self.fileName)
    }

    /// The canonical spelling of an endpoint, so that `LOCALHOST:4984` and `localhost:4984` are one entry.
    package static func endpoint(host: String, port: Int) -> String {
        var host = host.lowercased()
        if host.hasPrefix("["), host.hasSuffix("]") {
            host = String(host.dropFirst().dropLast())
        }
        return host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    /// Splits `host:port` or `[v6]:port`.
    package static func parseEndpoint(_ text: String) -> (host: String, port: Int)? {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]),
            (1...65535).contains(port)
        else { return nil }
        var host = String(text[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") {
            host = String(host.dropFirst().dropLast())
        } else if host.contains(":") {
            return nil
        }
        return host.isEmpty ? nil : (host, port)
    }

    /// Every recorded pin, oldest first; none when the file does not exist yet.
    package func entries() throws(IdentityError) -> [Entry] {
        guard IdentityFileSystem.fileExists(path) else { return [] }
        let contents = try IdentityFileSystem.readFile(path)
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        do {
            return try decoder.decode([Entry].self, from: Data(contents))
        } catch {
            throw .fileUnreadable(
                path: path, reason: "not a list of trusted peers (\(error)); fix it or remove it and add the pins again"
            )
        }
    }

    /// Records `entry`, replacing any pin for the same endpoint.
    package func add(_ entry: Entry) throws(IdentityError) {
        var entries = try entries().filter { $0.endpoint != entry.endpoint }
        entries.append(entry)
        try save(entries)
    }

    /// Forgets the pin for `endpoint`; false when there was none.
    @discardableResult
    package func remove(endpoint: String) throws(IdentityError) -> Bool {
        let entries = try entries()
        let remaining = entries.filter { $0.endpoint != endpoint }
        guard remaining.count != entries.count else { return false }
        try save(remaining)
        return true
    }

    /// The pin recorded for `host:port`, as a trust policy.
    package func policy(host: String, port: Int) throws -> ServerTrustPolicy? {
        let endpoint = Self.endpoint(host: host, port: port)
        guard let entry = try entries().first(where: { $0.endpoint == endpoint }) else { return nil }
        return try .pinned(fingerprint: entry.sha256)
    }

    private func save(_ entries: [Entry]) throws(IdentityError) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        encoder.dateEncodingStrategy = .iso8601
        let data: Data
        do {
            data = try encoder.encode(entries)
        } catch {
            throw .fileNotWritable(path: path, reason: "\(error)")
        }
        try IdentityFileSystem.createDirectory((path as NSString).deletingLastPathComponent)
        try IdentityFileSystem.writeAtomically(Array(data), to: path, mode: 0o600)
    }
}
