import Foundation

/// A gateway configuration file for tests and scripts (through `GatewayConfigWriter`): the sections a test cares
/// about, with every key a test does not set left at the gateway's own default. The ops endpoint and every
/// listener are on loopback with a port the system picks unless the test says otherwise.
package struct GatewayTOML: CustomStringConvertible, Sendable {
    /// A TOML value as the configuration uses them.
    package enum Value: Sendable, Equatable, ExpressibleByStringInterpolation, ExpressibleByIntegerLiteral,
        ExpressibleByBooleanLiteral
    {
        case string(String)
        case integer(Int)
        case boolean(Bool)
        case strings([String])

        package init(stringLiteral value: String) { self = .string(value) }
        package init(integerLiteral value: Int) { self = .integer(value) }
        package init(booleanLiteral value: Bool) { self = .boolean(value) }

        var literal: String {
            switch self {
            case .string(let text): Self.quoted(text)
            case .integer(let number): "\(number)"
            case .boolean(let flag): "\(flag)"
            case .strings(let texts): "[" + texts.map(Self.quoted).joined(separator: ", ") + "]"
            }
        }

        /// A TOML basic string: quotes, backslashes and control characters escaped.
        static func quoted(_ text: String) -> String {
            var escaped = "\""
            for scalar in text.unicodeScalars {
                switch scalar {
                case "\"": escaped += "\\\""
                case "\\": escaped += "\\\\"
                case "\n": escaped += "\\n"
                case "\t": escaped += "\\t"
                case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                    escaped += String(format: "\\u%04X", scalar.value)
                default: escaped.unicodeScalars.append(scalar)
                }
            }
            return escaped + "\""
        }
    }

    /// One table: keys in the order they are written.
    package struct Table: Sendable, Equatable {
        package private(set) var entries: [(key: String, value: Value)]

        package subscript(key: String) -> Value? {
            get { entries.first { $0.key == key }?.value }
            set {
                let index = entries.firstIndex { $0.key == key }
                switch (index, newValue) {
                case (let index?, let value?): entries[index].value = value
                case (let index?, nil): entries.remove(at: index)
                case (nil, let value?): entries.append((key: key, value: value))
                case (nil, nil): break
                }
            }
        }

        /// This table with `key` set: for keys the builders do not name.
        package func setting(_ key: String, _ value: Value) -> Table {
            var table = self
            table[key] = value
            return table
        }

        package static func == (lhs: Table, rhs: Table) -> Bool {
            lhs.entries.map(\.key) == rhs.entries.map(\.key) && lhs.entries.map(\.value) == rhs.entries.map(\.value)
        }

        func rendered(header: String) -> String {
            ([header] + entries.map { "\($0.key) = \($0.value.literal)" }).joined(separator: "\n")
        }
    }

    package var node: Table
    /// nil leaves out `[ops]`, for commands that never serve.
    package var ops: Table?
    package var databases: [Table]
    package var listeners: [Table]
    package var upstreams: [Table]

    /// A node named `name` with its data in `dataDirectory`, one database (`inventory`), the ops endpoint on
    /// `opsPort` of loopback (0: a port the system picks), and `listeners` and `upstreams`.
    /// - Parameter opsPort: nil leaves out `[ops]`.
    package init(
        name: String = "test-node", dataDirectory: String?, opsPort: Int? = 0, databases: [String] = ["inventory"],
        listeners: [Table] = [], upstreams: [Table] = []
    ) {
        node = ["name": .string(name)]
        if let dataDirectory { node["data_dir"] = .string(dataDirectory) }
        ops = opsPort.map { ["address": "127.0.0.1", "port": .integer($0)] }
        self.databases = databases.map { ["name": .string($0)] }
        self.listeners = listeners
        self.upstreams = upstreams
    }

    /// A `[[listener]]` serving `databases` on loopback; `tls` and `auth` take the configuration's own words.
    package static func listener(
        name: String = "lan", interface: String = "127.0.0.1", port: Int = 0, tls: String = "off",
        auth: String = "none", usersFile: String? = nil, databases: [String] = ["inventory"]
    ) -> Table {
        var table: Table = [
            "name": .string(name), "interface": .string(interface), "port": .integer(port), "tls": .string(tls),
            "auth": .string(auth),
        ]
        table["users_file"] = usersFile.map(Value.string)
        table["databases"] = .strings(databases)
        return table
    }

    /// An `[[upstream]]` of `database` to `url` (or to a pairing payload, with `pairing` set instead).
    package static func upstream(
        name: String = "hub", database: String = "inventory", url: String? = nil, pairing: String? = nil,
        type: String = "push-and-pull", continuous: Bool = true
    ) -> Table {
        var table: Table = ["name": .string(name), "database": .string(database)]
        table["url"] = url.map(Value.string)
        table["pairing"] = pairing.map(Value.string)
        table["type"] = .string(type)
        table["continuous"] = .boolean(continuous)
        return table
    }

    package var description: String {
        var sections = [node.rendered(header: "[node]")]
        if let ops { sections.append(ops.rendered(header: "[ops]")) }
        sections += databases.map { $0.rendered(header: "[[database]]") }
        sections += listeners.map { $0.rendered(header: "[[listener]]") }
        sections += upstreams.map { $0.rendered(header: "[[upstream]]") }
        return sections.joined(separator: "\n\n") + "\n"
    }

    /// Writes the file and returns its path.
    @discardableResult
    package func write(to path: String) throws -> String {
        try description.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }
}

extension GatewayTOML.Table: ExpressibleByDictionaryLiteral {
    package init(dictionaryLiteral elements: (String, GatewayTOML.Value)...) {
        entries = elements.map { (key: $0.0, value: $0.1) }
    }
}
