import Foundation

extension ListenerSettings {
    static let keys = [
        "name", "interface", "port", "tls", "tls_certificate", "tls_key", "tls_pkcs12",
        "tls_pkcs12_password_file",
        "auth", "users_file", "client_ca_certificates", "databases", "delta_sync",
        "max_connections", "max_message_size", "idle_timeout", "heartbeat", "dns_sd",
        "dns_sd_type", "dns_sd_name", "rest_api", "rest_max_body_size",
    ]

    private enum TLSMode: String, CaseIterable {
        case off
        case selfSigned = "self-signed"
        case file
    }

    private enum AuthenticationMode: String, CaseIterable {
        case none
        case basic
        case clientCertificate = "client-cert"
    }

    private static let pemKeys = ["tls_certificate", "tls_key"]
    private static let pkcs12Keys = ["tls_pkcs12", "tls_pkcs12_password_file"]

    init(
        decoding table: SettingsTable, name: String, node: NodeSettings,
        databases: [DatabaseSettings]
    ) throws {
        try table.rejectUnknownKeys(allowed: Self.keys)
        let tls = try Self.decodeTLS(table)
        let authentication = try Self.decodeAuthentication(table, tls: tls, node: node)
        let restAPI = try table.bool("rest_api").map { $0 ? RESTAPIAccess.readWrite : .off }
        if restAPI == .off {
            try table.rejectPresent(["rest_max_body_size"], because: "with rest_api = true")
        }
        self.init(
            name: name,
            interface: try table.ipAddressOrInterfaceName("interface") ?? "0.0.0.0",
            port: try table.integer("port", in: 0...65_535) ?? 4984,
            tls: tls,
            authentication: authentication,
            databases: try Self.decodeDatabaseNames(table, databases: databases),
            deltaSync: try table.bool("delta_sync") ?? true,
            maxConnections: try table.integer("max_connections", in: 1...100_000)
                ?? ListenerSettings.defaultMaxConnections,
            serviceDiscovery: try Self.decodeServiceDiscovery(table, node: node),
            maxMessageSize: try table.byteCount("max_message_size", in: Self.messageSizeRange)
                ?? Self.defaultMaxMessageSize,
            idleTimeout: try Self.decodeIdleTimeout(table),
            heartbeat: try table.heartbeat("heartbeat"),
            restAPI: restAPI,
            restMaxBodySize: try table.byteCount("rest_max_body_size", in: Self.restBodySizeRange)
                ?? Self.defaultRESTMaxBodySize
        )
    }

    /// Below 1 MiB ordinary documents with attachments stop replicating; above 1 GiB one client could hold
    /// that much memory per message.
    static let messageSizeRange = (1 << 20)...(1 << 30)

    /// Below 1 KiB not even a small document fits; above 1 GiB one request could hold that much memory.
    static let restBodySizeRange = 1024...(1 << 30)

    private static func decodeIdleTimeout(_ table: SettingsTable) throws -> Duration? {
        let timeout = try table.durationOrOff("idle_timeout") ?? defaultIdleTimeout
        guard timeout != .zero else {
            return nil
        }
        // A live client pings at least once a heartbeat, so a shorter idle timeout would drop healthy connections.
        guard timeout > couchbaseLiteHeartbeat else {
            throw table.error(
                at: "idle_timeout",
                "must be longer than Couchbase Lite's \(couchbaseLiteHeartbeat.configurationText) heartbeat, or \"off\"; got \(timeout.configurationText)"
            )
        }
        return timeout
    }

    private static func decodeTLS(_ table: SettingsTable) throws -> ListenerTLS {
        switch try table.choice("tls", as: TLSMode.self) ?? .selfSigned {
        case .off:
            try table.rejectPresent(pemKeys + pkcs12Keys, because: "with tls = \"file\"")
            return .off
        case .selfSigned:
            try table.rejectPresent(pemKeys + pkcs12Keys, because: "with tls = \"file\"")
            return .selfSigned
        case .file:
            if table.contains("tls_pkcs12") {
                try table.rejectPresent(
                    pemKeys, because: "instead of tls_pkcs12, not together with it")
                return .pkcs12File(
                    path: try table.requiredReadableFile("tls_pkcs12", because: "tls = \"file\""),
                    password: try table.secretFile("tls_pkcs12_password_file")
                )
            }
            try table.rejectPresent(
                ["tls_pkcs12_password_file"], because: "together with tls_pkcs12")
            guard table.contains("tls_certificate") || table.contains("tls_key") else {
                throw table.error(
                    at: "tls",
                    "tls = \"file\" needs tls_certificate and tls_key (PEM), or tls_pkcs12"
                )
            }
            let reason = "tls_certificate and tls_key go together"
            try table.requireAll(pemKeys, because: reason)
            return .pemFiles(
                certificate: try table.requiredReadableFile("tls_certificate", because: reason),
                privateKey: try table.requiredReadableFile("tls_key", because: reason)
            )
        }
    }

    private static func decodeAuthentication(
        _ table: SettingsTable,
        tls: ListenerTLS,
        node: NodeSettings
    ) throws -> ListenerAuthentication {
        // Required rather than defaulted: whether a listener is open to anyone must be a visible choice.
        guard let mode = try table.choice("auth", as: AuthenticationMode.self) else {
            throw table.error(
                at: "auth",
                "missing required key `auth`",
                allowed: AuthenticationMode.allCases.map(\.rawValue)
            )
        }
        switch mode {
        case .none:
            try table.rejectPresent(["users_file"], because: "with auth = \"basic\"")
            try table.rejectPresent(
                ["client_ca_certificates"], because: "with auth = \"client-cert\"")
            return .none
        case .basic:
            try table.rejectPresent(
                ["client_ca_certificates"], because: "with auth = \"client-cert\"")
            // Not read here: a missing, empty or broken users file is something the running listener reports
            // (and `config check` checks) rather than a reason to refuse the whole configuration.
            return .basic(
                usersFile: try table.path("users_file")
                    ?? URL(fileURLWithPath: node.dataDirectory).appendingPathComponent(defaultUsersFileName).path)
        case .clientCertificate:
            try table.rejectPresent(["users_file"], because: "with auth = \"basic\"")
            guard tls.isEnabled else {
                throw table.error(
                    at: "auth",
                    "auth = \"client-cert\" requires TLS, but tls = \"off\"",
                    allowed: ["self-signed", "file"]
                )
            }
            guard let authorities = try table.readableFiles("client_ca_certificates"),
                !authorities.isEmpty
            else {
                throw table.error(
                    at: "client_ca_certificates",
                    "auth = \"client-cert\" needs the CA certificates (PEM files) that client certificates must chain to"
                )
            }
            return .clientCertificate(trustedCertificateAuthorities: authorities)
        }
    }

    private static func decodeDatabaseNames(
        _ table: SettingsTable,
        databases: [DatabaseSettings]
    ) throws -> [String] {
        let configured = databases.map(\.name)
        guard let names = try table.uniqueStringArray("databases"), !names.isEmpty else {
            throw table.error(
                at: "databases", "must list at least one database to serve", allowed: configured)
        }
        for (index, name) in names.enumerated() where !configured.contains(name) {
            throw table.error(
                at: "databases", element: index, "unknown database \"\(name)\"", allowed: configured
            )
        }
        return names
    }

    private static func decodeServiceDiscovery(
        _ table: SettingsTable,
        node: NodeSettings
    ) throws -> ServiceDiscoverySettings? {
        guard try table.bool("dns_sd") ?? false else {
            try table.rejectPresent(["dns_sd_type", "dns_sd_name"], because: "with dns_sd = true")
            return nil
        }
        let serviceType =
            try table.string("dns_sd_type") ?? ServiceDiscoverySettings.defaultServiceType
        guard isServiceType(serviceType) else {
            throw table.error(
                at: "dns_sd_type",
                "must look like \"_name._tcp\" (name: 1-62 lowercase letters, digits or '-'), got \"\(serviceType)\""
            )
        }
        let instanceName = try table.string("dns_sd_name") ?? node.name
        guard instanceName.utf8.count <= 63 else {
            throw table.error(at: "dns_sd_name", "must be at most 63 bytes (a DNS label)")
        }
        return ServiceDiscoverySettings(serviceType: serviceType, instanceName: instanceName)
    }

    /// Service names of lowercase letters, digits and hyphens that fit one DNS label with their underscore. RFC 6335
    /// asks for at most 15 characters, but Bonjour and Avahi accept longer ones and Couchbase Lite's own sample
    /// type `_cblistservicesync._tcp` is 17, so the DNS limit is the one enforced.
    private static func isServiceType(_ text: String) -> Bool {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[1] == "_tcp" else {
            return false
        }
        let service = parts[0].dropFirst()
        return parts[0].hasPrefix("_")
            && (1...62).contains(service.count)
            && service.allSatisfy { $0.isASCII && ($0.isLowercase || $0.isNumber || $0 == "-") }
    }
}
