import Foundation
import HexEncoding
import PairingURI
import SyncIdentifiers

extension UpstreamSettings {
    static let keys = [
        "name", "database", "url", "pairing", "type", "continuous", "collections", "document_ids", "channels",
        "auth",
        "username", "password_file", "session_cookie_name", "session_id_file", "client_certificate",
        "client_key", "client_pkcs12", "client_pkcs12_password_file",
        "server_trust", "ca_certificates", "pinned_certificate", "pinned_sha256", "heartbeat",
        "max_attempts",
        "max_attempt_wait", "conflict_resolver", "remote_uuid", "protocol",
    ]

    private enum AuthenticationMode: String, CaseIterable {
        case none
        case basic
        case session
        case clientCertificate = "client-cert"
    }

    private enum ServerTrustMode: String, CaseIterable {
        case certificateAuthorities = "ca"
        case selfSignedOnly = "self-signed-only"
        case pinned
        case trustStore = "trust-store"
    }

    /// Sync Gateway's session cookie name.
    static let defaultSessionCookieName = "SyncGatewaySession"

    private static let basicKeys = ["username", "password_file", "password"]
    private static let sessionKeys = ["session_cookie_name", "session_id_file"]
    private static let clientCertificateKeys = [
        "client_certificate", "client_key", "client_pkcs12", "client_pkcs12_password_file",
    ]
    private static let trustKeys = [
        "server_trust", "ca_certificates", "pinned_certificate", "pinned_sha256",
    ]

    init(decoding table: SettingsTable, name: String, databases: [DatabaseSettings]) throws {
        try table.rejectUnknownKeys(allowed: Self.keys)
        let databaseName = try table.requiredString("database")
        guard let database = databases.first(where: { $0.name == databaseName }) else {
            throw table.error(
                at: "database",
                "unknown database \"\(databaseName)\"",
                allowed: databases.map(\.name)
            )
        }
        let endpoints = try Self.decodeEndpoints(table)
        let url = endpoints.urls[0]
        let direction = try table.choice("type", as: ReplicationDirection.self) ?? .pushAndPull
        let channels = try table.uniqueStringArray("channels") ?? []
        if !direction.pulls && !channels.isEmpty {
            throw table.error(at: "channels", "channels filter what is pulled, but type = \"push\"")
        }
        let isSecure = url.scheme == "wss"
        self.init(
            name: name,
            database: databaseName,
            url: url,
            direction: direction,
            continuous: try table.bool("continuous") ?? true,
            collections: try Self.decodeCollections(table, database: database),
            documentIDs: try table.uniqueStringArray("document_ids") ?? [],
            channels: channels,
            authentication: try Self.decodeAuthentication(table, isSecure: isSecure),
            serverTrust: isSecure
                ? try endpoints.pinnedSHA256.map { .pinnedSHA256($0) } ?? Self.decodeServerTrust(table) : nil,
            heartbeat: try table.heartbeat("heartbeat"),
            maxAttempts: try table.integer("max_attempts", in: 0...1_000_000) ?? 0,
            maxAttemptWait: try table.duration("max_attempt_wait", atLeast: .seconds(1))
                ?? .seconds(300),
            conflictResolver: try table.choice("conflict_resolver", as: ConflictResolver.self)
                ?? .default,
            remoteUUID: try table.string("remote_uuid"),
            pairing: endpoints.pairing,
            replicationProtocol: try table.choice("protocol", as: UpstreamProtocol.self) ?? .auto
        )
        if !isSecure {
            try table.rejectPresent(Self.trustKeys, because: "with wss:// URLs")
        }
    }

    /// The upstream's endpoints, from `url`, or from `pairing`: every address of the paired gateway, and the
    /// SHA-256 pin of its certificate (lowercase hex).
    private static func decodeEndpoints(_ table: SettingsTable) throws
        -> (urls: [URL], pinnedSHA256: String?, pairing: PairingPayload?)
    {
        guard let text = try table.string("pairing") else {
            return ([try decodeURL(table)], nil, nil)
        }
        try table.rejectPresent(["url"], because: "without pairing (the payload names the addresses)")
        try table.rejectPresent(
            ["server_trust", "ca_certificates", "pinned_certificate", "pinned_sha256"],
            because: "without pairing (the payload pins the certificate)")
        let payload: PairingPayload
        do {
            payload = try PairingPayload(decoding: text)
        } catch {
            throw table.error(at: "pairing", "is not a valid pairing payload: \(error)")
        }
        let urls = payload.addresses.indices.compactMap { payload.url(forAddressAt: $0) }
        guard !urls.isEmpty else {
            throw table.error(at: "pairing", "names no address that forms a URL")
        }
        let hex = payload.certificateSHA256.hexEncoded()
        return (urls, hex, payload)
    }

    private static func decodeURL(_ table: SettingsTable) throws -> URL {
        let text = try table.requiredString("url")
        let example = "e.g. \"wss://sync.example.com:4984/inventory\""
        guard
            let components = URLComponents(string: text),
            let scheme = components.scheme?.lowercased(),
            scheme == "ws" || scheme == "wss"
        else {
            throw table.error(
                at: "url", "must be a ws:// or wss:// URL, \(example); got \"\(text)\"")
        }
        guard let host = components.host, !host.isEmpty else {
            throw table.error(at: "url", "must name a host, \(example)")
        }
        // Credentials in the URL would end up in logs; they belong in username/password_file.
        guard components.user == nil, components.password == nil else {
            throw table.error(
                at: "url", "must not contain credentials; use username and password_file")
        }
        guard components.query == nil, components.fragment == nil else {
            throw table.error(at: "url", "must not have a query or fragment, \(example)")
        }
        let segments = components.path.split(separator: "/")
        guard let remoteDatabase = segments.last else {
            throw table.error(at: "url", "must end with the remote database name, \(example)")
        }
        guard remoteDatabase != "_blipsync" else {
            throw table.error(
                at: "url", "must end with the database name; /_blipsync is appended automatically")
        }
        guard let url = components.url else {
            throw table.error(at: "url", "is not a valid URL, \(example)")
        }
        return url
    }

    private static func decodeCollections(_ table: SettingsTable, database: DatabaseSettings) throws
        -> [CollectionName]
    {
        guard let collections = try table.collectionNames("collections") else {
            return database.collections
        }
        for (index, collection) in collections.enumerated()
        where !database.collections.contains(collection) {
            throw table.error(
                at: "collections",
                element: index,
                "database \"\(database.name)\" has no collection \"\(collection.qualifiedName)\"",
                allowed: database.collections.map(\.qualifiedName)
            )
        }
        return collections
    }

    private static func decodeAuthentication(_ table: SettingsTable, isSecure: Bool) throws
        -> UpstreamAuthentication
    {
        let mode =
            try table.choice("auth", as: AuthenticationMode.self)
            ?? (table.contains("username") ? .basic : .none)
        switch mode {
        case .none:
            try table.rejectPresent(basicKeys, because: "with auth = \"basic\"")
            try table.rejectPresent(sessionKeys, because: "with auth = \"session\"")
            try table.rejectPresent(clientCertificateKeys, because: "with auth = \"client-cert\"")
            return .none
        case .basic:
            try table.rejectPresent(sessionKeys, because: "with auth = \"session\"")
            try table.rejectPresent(clientCertificateKeys, because: "with auth = \"client-cert\"")
            let username = try table.requiredString("username")
            guard !username.contains(":") else {
                throw table.error(
                    at: "username",
                    "must not contain ':' (HTTP Basic separates name and password with it)")
            }
            // An environment variable beats password_file, like every other override.
            if let password = try table.string("password") {
                return .basic(username: username, password: Secret(password))
            }
            guard let password = try table.secretFile("password_file") else {
                throw table.error(
                    at: "password_file",
                    "auth = \"basic\" needs a password: set password_file or the "
                        + "\(EnvironmentOverrides.prefix)UPSTREAM_<NAME>_PASSWORD variable"
                )
            }
            return .basic(username: username, password: password)
        case .session:
            try table.rejectPresent(basicKeys, because: "with auth = \"basic\"")
            try table.rejectPresent(clientCertificateKeys, because: "with auth = \"client-cert\"")
            let cookieName = try table.string("session_cookie_name") ?? defaultSessionCookieName
            guard
                cookieName.allSatisfy({
                    $0.isASCII && ($0.isLetter || $0.isNumber || "_-.".contains($0))
                })
            else {
                throw table.error(
                    at: "session_cookie_name", "must contain only letters, digits, '_', '-' and '.'"
                )
            }
            let sessionID = try table.requiredSecretFile(
                "session_id_file",
                because: "auth = \"session\" sends the session ID it holds"
            )
            return .session(cookieName: cookieName, sessionID: sessionID)
        case .clientCertificate:
            try table.rejectPresent(basicKeys, because: "with auth = \"basic\"")
            try table.rejectPresent(sessionKeys, because: "with auth = \"session\"")
            guard isSecure else {
                throw table.error(at: "auth", "auth = \"client-cert\" requires a wss:// url")
            }
            if table.contains("client_pkcs12") {
                try table.rejectPresent(
                    ["client_certificate", "client_key"], because: "instead of client_pkcs12, not together with it")
                let reason = "auth = \"client-cert\" presents the identity it holds"
                return .clientPKCS12(
                    path: try table.requiredReadableFile("client_pkcs12", because: reason),
                    password: try table.requiredSecretFile(
                        "client_pkcs12_password_file", because: "the bundle's key is encrypted with it")
                )
            }
            try table.rejectPresent(["client_pkcs12_password_file"], because: "with client_pkcs12")
            let reason = "auth = \"client-cert\" presents them"
            try table.requireAll(["client_certificate", "client_key"], because: reason)
            return .clientCertificate(
                certificate: try table.requiredReadableFile("client_certificate", because: reason),
                privateKey: try table.requiredReadableFile("client_key", because: reason)
            )
        }
    }

    private static func decodeServerTrust(_ table: SettingsTable) throws -> ServerTrust {
        switch try table.choice("server_trust", as: ServerTrustMode.self) ?? .certificateAuthorities
        {
        case .certificateAuthorities:
            try table.rejectPresent(
                ["pinned_certificate", "pinned_sha256"], because: "with server_trust = \"pinned\"")
            return .certificateAuthorities(try table.readableFiles("ca_certificates") ?? [])
        case .selfSignedOnly:
            try table.rejectPresent(["ca_certificates"], because: "with server_trust = \"ca\"")
            try table.rejectPresent(
                ["pinned_certificate", "pinned_sha256"], because: "with server_trust = \"pinned\"")
            return .selfSignedOnly
        case .trustStore:
            try table.rejectPresent(["ca_certificates"], because: "with server_trust = \"ca\"")
            try table.rejectPresent(
                ["pinned_certificate", "pinned_sha256"], because: "with server_trust = \"pinned\"")
            return .trustStore
        case .pinned:
            try table.rejectPresent(["ca_certificates"], because: "with server_trust = \"ca\"")
            if table.contains("pinned_certificate") {
                try table.rejectPresent(
                    ["pinned_sha256"],
                    because: "instead of pinned_certificate, not together with it")
                return .pinnedCertificate(
                    path: try table.requiredReadableFile(
                        "pinned_certificate", because: "server_trust = \"pinned\"")
                )
            }
            guard let digest = try table.string("pinned_sha256") else {
                throw table.error(
                    at: "server_trust",
                    "server_trust = \"pinned\" needs pinned_certificate or pinned_sha256")
            }
            let hex = digest.replacingOccurrences(of: ":", with: "").lowercased()
            guard hex.count == 64, hex.allSatisfy(\.isHexDigit) else {
                throw table.error(
                    at: "pinned_sha256",
                    "must be the SHA-256 of the DER certificate as 64 hex digits (colons allowed), got \"\(digest)\""
                )
            }
            return .pinnedSHA256(hex)
        }
    }
}
