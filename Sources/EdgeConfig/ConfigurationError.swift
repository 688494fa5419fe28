/// A configuration problem, described well enough to fix it without reading the source code:
/// where it is (file and line, or the environment variable / command-line option), which key,
/// what is wrong, and which values would be accepted.
///
/// Secrets are never part of an error: messages quote only non-secret values.
package struct ConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The configuration file path, `embedded default.toml`, `environment variable EDGE_GATEWAY_…`
    /// or `command line`.
    package var source: String
    /// 1-based line in `source`, when the problem is in a file.
    package var line: Int?
    /// 1-based column, known only for syntax errors.
    package var column: Int?
    /// The setting concerned, e.g. `listener "lan".port` or `database[1].collections[0]`.
    package var keyPath: String?
    package var message: String
    /// The values that would have been accepted, when they can be listed.
    package var allowedValues: [String]
    /// The file a key names, when what is wrong is that file (missing, unreadable, empty) rather than the
    /// configuration text: `serve` keeps the rest of the node running and reports the entry that needs it.
    package var unusableFile: String?

    package init(
        source: String,
        line: Int? = nil,
        column: Int? = nil,
        keyPath: String? = nil,
        message: String,
        allowedValues: [String] = [],
        unusableFile: String? = nil
    ) {
        self.source = source
        self.line = line
        self.column = column
        self.keyPath = keyPath
        self.message = message
        self.allowedValues = allowedValues
        self.unusableFile = unusableFile
    }

    /// `<source>[:<line>[:<column>]]: [<key path>: ]<message>[; allowed: a, b, c]`, the shape
    /// compilers use, so editors and terminals can jump to the line.
    package var description: String {
        var text = source
        if let line {
            text += ":\(line)"
            if let column {
                text += ":\(column)"
            }
        }
        text += ": "
        if let keyPath {
            text += "\(keyPath): "
        }
        text += message
        if !allowedValues.isEmpty {
            text += "; allowed: " + allowedValues.joined(separator: ", ")
        }
        return text
    }
}
