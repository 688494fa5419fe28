import Foundation

/// The `EDGE_GATEWAY_…` environment variables, sorted by the table they override.
///
/// Per-entry variables embed the entry's name upper-cased with `-` turned into `_`
/// (`[[listener]] name = "lan-2"` → `EDGE_GATEWAY_LISTENER_LAN_2_PORT`). Any other variable with
/// the prefix is an error, so a misspelt variable cannot be silently ignored.
struct EnvironmentOverrides {
    static let prefix = "EDGE_GATEWAY_"
    /// Read by ``ConfigurationLoader/load(file:environment:overrides:)`` when no file is given.
    static let configFileVariable = "EDGE_GATEWAY_CONFIG"

    private static let nodeVariables = [
        "NODE_NAME": "name", "DATA_DIR": "data_dir", "LOG_LEVEL": "log_level",
    ]
    private static let opsVariables = ["OPS_ADDRESS": "address", "OPS_PORT": "port"]
    private static let listenerSuffixes = [
        "_PORT": "port", "_INTERFACE": "interface", "_TLS": "tls",
        // Discovery depends on where the file is deployed (a bridge network carries no multicast DNS).
        "_DNS_SD": "dns_sd",
    ]
    /// `password` is not a file key: the file names a `password_file`, the environment carries the
    /// password itself (as container secrets usually arrive).
    private static let upstreamSuffixes = [
        "_URL": "url", "_USERNAME": "username", "_PASSWORD": "password",
    ]

    /// Every accepted variable, with `<NAME>` standing for an entry name; listed in errors.
    static let acceptedVariables: [String] =
        [configFileVariable]
        + (nodeVariables.keys.sorted() + opsVariables.keys.sorted()).map { prefix + $0 }
        + listenerSuffixes.keys.sorted().map { "\(prefix)LISTENER_<NAME>\($0)" }
        + upstreamSuffixes.keys.sorted().map { "\(prefix)UPSTREAM_<NAME>\($0)" }

    var node: [String: OverrideValue] = [:]
    var ops: [String: OverrideValue] = [:]
    /// Keyed by the entry's environment name (`LAN_2`), then by the settings key.
    var listeners: [String: [String: OverrideValue]] = [:]
    var upstreams: [String: [String: OverrideValue]] = [:]

    init(environment: [String: String]) throws {
        for (variable, value) in environment.sorted(by: { $0.key < $1.key }) {
            guard variable.hasPrefix(Self.prefix), variable != Self.configFileVariable else {
                continue
            }
            let override = OverrideValue(origin: .environment(variable: variable), text: value)
            let suffix = String(variable.dropFirst(Self.prefix.count))
            if let key = Self.nodeVariables[suffix] {
                node[key] = override
            } else if let key = Self.opsVariables[suffix] {
                ops[key] = override
            } else if let (name, key) = Self.entryVariable(
                suffix, kind: "LISTENER_", suffixes: Self.listenerSuffixes)
            {
                listeners[name, default: [:]][key] = override
            } else if let (name, key) = Self.entryVariable(
                suffix, kind: "UPSTREAM_", suffixes: Self.upstreamSuffixes)
            {
                upstreams[name, default: [:]][key] = override
            } else {
                throw ConfigurationError(
                    source: override.sourceDescription,
                    message: "unknown EDGE_GATEWAY_ variable (misspelt?)",
                    allowedValues: Self.acceptedVariables
                )
            }
        }
    }

    /// The name an entry has inside its variables.
    static func environmentName(of entryName: String) -> String {
        entryName.uppercased().replacingOccurrences(of: "-", with: "_")
    }

    private static func entryVariable(
        _ suffix: String,
        kind: String,
        suffixes: [String: String]
    ) -> (name: String, key: String)? {
        guard suffix.hasPrefix(kind) else {
            return nil
        }
        let rest = suffix.dropFirst(kind.count)
        for (variableSuffix, key) in suffixes where rest.hasSuffix(variableSuffix) {
            let name = rest.dropLast(variableSuffix.count)
            if !name.isEmpty {
                return (String(name), key)
            }
        }
        return nil
    }

    /// Fails on variables for entries that do not exist, which would otherwise have no effect.
    static func rejectUnmatched(
        _ entries: [String: [String: OverrideValue]],
        kind: String,
        configuredNames: [String]
    ) throws {
        let configured = Set(configuredNames.map(environmentName(of:)))
        let unmatched = entries.filter { !configured.contains($0.key) }
        guard let (name, values) = unmatched.min(by: { $0.key < $1.key }),
            let override = values.values.min(by: { $0.sourceDescription < $1.sourceDescription })
        else {
            return
        }
        throw ConfigurationError(
            source: override.sourceDescription,
            message: "no [[\(kind)]] is named \"\(name)\" (names are upper-cased, '-' becomes '_')",
            allowedValues: configuredNames.map(environmentName(of:))
        )
    }
}
