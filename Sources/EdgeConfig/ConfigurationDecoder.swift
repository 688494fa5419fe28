import Foundation
import Logging

/// Turns a parsed configuration document plus environment and command-line overrides into a
/// validated ``GatewayConfiguration``. The first problem found is thrown.
struct ConfigurationDecoder {
    let environment: EnvironmentOverrides
    let overrides: ConfigurationOverrides
    /// Relative `data_dir` values are resolved against it.
    let workingDirectory: String
    var unusableFiles: UnusableFilePolicy = .reject

    static let rootKeys = ["node", "ops", "database", "listener", "upstream"]
    static let nodeKeys = ["name", "data_dir", "log_level"]
    static let opsKeys = ["address", "port"]

    func decode(_ root: SettingsTable) throws -> GatewayConfiguration {
        try root.rejectUnknownKeys(allowed: Self.rootKeys)
        let node = try decodeNode(try root.subtableOrEmpty("node"))
        let ops = try decodeOps(try root.subtableOrEmpty("ops"))

        let databases = try decodeEntries(root, kind: "database", environment: [:]) { table, name in
            try DatabaseSettings(decoding: table, name: name)
        }
        guard !databases.isEmpty else {
            throw root.error(at: "database", "at least one [[database]] is required")
        }

        var portClaims = [PortClaim(address: ops.address, port: ops.port, owner: "[ops]")]
        var unavailable: [UnavailableEntry] = []
        let listeners = try decodeEntries(
            root, kind: "listener", environment: environment.listeners
        ) { table, name in
            try withUnusableFiles(table, kind: .listener, name: name, recordingIn: &unavailable) { table in
                let listener = try ListenerSettings(
                    decoding: table, name: name, node: node, databases: databases)
                try PortClaim(
                    address: listener.interface, port: listener.port, owner: "listener \"\(name)\""
                )
                .claim(among: &portClaims, table: table)
                return listener
            }
        }.compactMap { $0 }
        let upstreams = try decodeEntries(
            root, kind: "upstream", environment: environment.upstreams
        ) { table, name in
            try withUnusableFiles(table, kind: .upstream, name: name, recordingIn: &unavailable) { table in
                try UpstreamSettings(decoding: table, name: name, databases: databases)
            }
        }.compactMap { $0 }

        try EnvironmentOverrides.rejectUnmatched(
            environment.listeners,
            kind: "listener",
            configuredNames: listeners.map(\.name) + unavailable.filter { $0.kind == .listener }.map(\.name)
        )
        try EnvironmentOverrides.rejectUnmatched(
            environment.upstreams,
            kind: "upstream",
            configuredNames: upstreams.map(\.name) + unavailable.filter { $0.kind == .upstream }.map(\.name)
        )
        return GatewayConfiguration(
            node: node,
            ops: ops,
            databases: databases,
            listeners: listeners,
            upstreams: upstreams,
            unavailableEntries: unavailable
        )
    }

    /// Decodes one entry; with ``UnusableFilePolicy/disableEntry``, an entry stopped by an unusable file is
    /// decoded again without opening files, so that every other problem in it is still refused, and is then
    /// recorded as unavailable (nil) instead of refusing the configuration.
    private func withUnusableFiles<Entry>(
        _ table: SettingsTable,
        kind: UnavailableEntry.Kind,
        name: String,
        recordingIn unavailable: inout [UnavailableEntry],
        _ decode: (SettingsTable) throws -> Entry
    ) throws -> Entry? {
        do {
            return try decode(table)
        } catch let error as ConfigurationError where error.unusableFile != nil && unusableFiles == .disableEntry {
            var withoutFiles = table
            withoutFiles.checksFiles = false
            _ = try decode(withoutFiles)
            unavailable.append(UnavailableEntry(kind: kind, name: name, problem: error))
            return nil
        }
    }

    private func decodeNode(_ section: SettingsTable) throws -> NodeSettings {
        var table = section
        table.overrides = environment.node.merging(overrides.nodeValues) { _, commandLine in
            commandLine
        }
        try table.rejectUnknownKeys(allowed: Self.nodeKeys)

        let name = try table.string("name") ?? "edge-gateway"
        // The node name is the default DNS-SD instance name, which DNS limits to 63 bytes.
        guard name.utf8.count <= 63,
            !name.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F })
        else {
            throw table.error(at: "name", "must be at most 63 bytes without control characters")
        }
        let dataDirectory = try table.string("data_dir") ?? "./data"
        let logLevel = try table.choice("log_level", as: Logger.Level.self) ?? .info
        return NodeSettings(
            name: name,
            dataDirectory: URL(
                fileURLWithPath: dataDirectory,
                relativeTo: URL(fileURLWithPath: workingDirectory, isDirectory: true)
            )
            .standardizedFileURL.path,
            logLevel: logLevel
        )
    }

    private func decodeOps(_ section: SettingsTable) throws -> OpsSettings {
        var table = section
        table.overrides = environment.ops.merging(overrides.opsValues) { _, commandLine in
            commandLine
        }
        try table.rejectUnknownKeys(allowed: Self.opsKeys)
        return OpsSettings(
            address: try table.ipAddress("address") ?? "127.0.0.1",
            port: try table.integer("port", in: 0...65_535) ?? 4985
        )
    }

    /// Decodes each `[[kind]]` table after reading its name, which must be unique and must not
    /// collide with another entry's name in environment-variable form.
    private func decodeEntries<Entry>(
        _ root: SettingsTable,
        kind: String,
        environment: [String: [String: OverrideValue]],
        decode: (SettingsTable, String) throws -> Entry
    ) throws -> [Entry] {
        var firstUse: [String: (name: String, line: Int?)] = [:]
        return try root.arrayOfTables(kind).map { element in
            var table = element
            let name = try table.entryName()
            let environmentName = EnvironmentOverrides.environmentName(of: name)
            if let previous = firstUse[environmentName] {
                let place = previous.line.map { " at line \($0)" } ?? ""
                if previous.name == name {
                    throw table.error(
                        at: "name", "duplicate \(kind) name \"\(name)\" (first defined\(place))")
                }
                throw table.error(
                    at: "name",
                    "\"\(name)\" and \"\(previous.name)\"\(place) both map to "
                        + "\(EnvironmentOverrides.prefix)\(kind.uppercased())_\(environmentName)_… variables; rename one"
                )
            }
            firstUse[environmentName] = (
                name,
                table.document.locator.line(
                    ofKey: "name", inTable: kind, occurrence: table.occurrence)
            )
            table.displayName = "\(kind) \"\(name)\""
            table.overrides = environment[environmentName] ?? [:]
            return try decode(table, name)
        }
    }
}

/// A TCP port bound by the ops server or a listener, to detect two of them on the same port.
private struct PortClaim {
    static let wildcardAddresses: Set<String> = ["0.0.0.0", "::"]

    let address: String
    let port: Int
    let owner: String

    func overlaps(_ other: PortClaim) -> Bool {
        // Port 0 asks for a free port, which never clashes.
        guard port != 0, port == other.port else {
            return false
        }
        return address == other.address
            || Self.wildcardAddresses.contains(address)
            || Self.wildcardAddresses.contains(other.address)
    }

    func claim(among claims: inout [PortClaim], table: SettingsTable) throws {
        if let holder = claims.first(where: overlaps) {
            throw table.error(
                at: "port", "port \(port) on \(address) is already used by \(holder.owner)")
        }
        claims.append(self)
    }
}
