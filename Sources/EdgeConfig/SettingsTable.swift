import TOMLKit

/// A value that replaces a file value: from an environment variable or a command-line override.
/// It is kept as text and converted by the same accessors as file values, so it is validated
/// exactly like them and errors name where it came from.
struct OverrideValue: Sendable, Equatable {
    enum Origin: Sendable, Equatable {
        case environment(variable: String)
        case commandLine
    }

    let origin: Origin
    let text: String

    var sourceDescription: String {
        switch origin {
        case .environment(let variable): "environment variable \(variable)"
        case .commandLine: "command line"
        }
    }
}

/// A TOML table under decoding, with typed accessors whose errors carry the key path, the line
/// and the accepted values.
package struct SettingsTable {
    let table: TOMLTable
    let document: ConfigurationDocument
    /// Header name of this table in the document (`node`, `listener`); nil for the root table.
    let header: String?
    /// Index among `[[header]]` tables of the same name.
    let occurrence: Int
    /// How key paths start: `node`, `listener[0]`, later `listener "lan"` once the name is known.
    package var displayName: String?
    /// Values that replace file values for some keys (environment, command line).
    var overrides: [String: OverrideValue] = [:]
    /// False while an entry whose file is unusable is checked for its other keys only (see
    /// ``UnusableFilePolicy/disableEntry``): the files it names are then not opened.
    var checksFiles = true

    init(
        table: TOMLTable,
        document: ConfigurationDocument,
        header: String? = nil,
        occurrence: Int = 0,
        displayName: String? = nil
    ) {
        self.table = table
        self.document = document
        self.header = header
        self.occurrence = occurrence
        self.displayName = displayName
    }

    // MARK: Errors

    func keyPath(_ key: String?, element: Int? = nil) -> String? {
        guard let key else {
            return displayName
        }
        let elementSuffix = element.map { "[\($0)]" } ?? ""
        guard let displayName else {
            return key + elementSuffix
        }
        return "\(displayName).\(key)\(elementSuffix)"
    }

    /// An error about `key` (or the table itself), located at the key's line or at the
    /// environment variable / command-line option that supplied it.
    package func error(
        at key: String?,
        element: Int? = nil,
        _ message: String,
        allowed: [String] = []
    ) -> ConfigurationError {
        if let key, let override = overrides[key] {
            return ConfigurationError(
                source: override.sourceDescription,
                keyPath: keyPath(key, element: element),
                message: message,
                allowedValues: allowed
            )
        }
        let line =
            document.locator.line(ofKey: key, inTable: header, occurrence: occurrence)
            ?? header.flatMap { document.locator.line(ofKey: $0, inTable: nil) }
        return ConfigurationError(
            source: document.name,
            line: line,
            keyPath: keyPath(key, element: element),
            message: message,
            allowedValues: allowed
        )
    }

    // MARK: Keys

    package func contains(_ key: String) -> Bool {
        overrides[key] != nil || table.contains(key: key)
    }

    /// Typos are errors: a misspelt key would otherwise be silently ignored and its default used.
    package func rejectUnknownKeys(allowed: [String]) throws {
        let unknown = table.keys.filter { !allowed.contains($0) }
        let firstInFile = unknown.min { lhs, rhs in
            lineOf(lhs) < lineOf(rhs)
        }
        if let key = firstInFile {
            throw error(at: key, "unknown key `\(key)`", allowed: allowed)
        }
    }

    /// Rejects keys that have no effect in the chosen mode, which usually means the mode is not
    /// what the author intended.
    func rejectPresent(_ keys: [String], because reason: String) throws {
        let present = keys.filter(contains).min { lineOf($0) < lineOf($1) }
        if let key = present {
            throw error(at: key, "`\(key)` is only used \(reason)")
        }
    }

    func requireAll(_ keys: [String], because reason: String) throws {
        if let missing = keys.first(where: { !contains($0) }) {
            throw error(at: missing, "missing required key `\(missing)` (\(reason))")
        }
    }

    private func lineOf(_ key: String) -> Int {
        document.locator.line(ofKey: key, inTable: header, occurrence: occurrence) ?? Int.max
    }

    // MARK: Tables

    /// The table `[key]`, or nil when absent.
    func subtable(_ key: String) throws -> SettingsTable? {
        guard let value = table[key] else {
            return nil
        }
        guard let subtable = value.table else {
            throw error(at: key, "must be a table ([\(key)]), got \(value.typeName)")
        }
        return SettingsTable(
            table: subtable,
            document: document,
            header: qualifiedHeader(key),
            displayName: keyPath(key)
        )
    }

    /// The table `[key]`, or an empty one when absent so that defaults and overrides still apply.
    func subtableOrEmpty(_ key: String) throws -> SettingsTable {
        try subtable(key)
            ?? SettingsTable(
                table: TOMLTable(), document: document, header: qualifiedHeader(key),
                displayName: keyPath(key))
    }

    /// The elements of the array of tables `[[key]]`; empty when absent.
    package func arrayOfTables(_ key: String) throws -> [SettingsTable] {
        guard let value = table[key] else {
            return []
        }
        guard let array = value.array else {
            throw error(at: key, "must be an array of tables ([[\(key)]]), got \(value.typeName)")
        }
        return try array.enumerated().map { index, element in
            guard let elementTable = element.table else {
                throw error(
                    at: key,
                    element: index,
                    "must be a table ([[\(key)]]), got \(element.typeName)"
                )
            }
            return SettingsTable(
                table: elementTable,
                document: document,
                header: qualifiedHeader(key),
                occurrence: index,
                displayName: keyPath(key, element: index)
            )
        }
    }

    private func qualifiedHeader(_ key: String) -> String {
        header.map { "\($0).\(key)" } ?? key
    }

    // MARK: Scalars

    /// A string value; empty strings are rejected unless `allowEmpty`.
    func string(_ key: String, allowEmpty: Bool = false) throws -> String? {
        let text: String
        switch rawValue(key) {
        case nil:
            return nil
        case .override(let override):
            text = override.text
        case .file(let value):
            guard let string = value.string else {
                throw error(at: key, "must be a string, got \(value.typeName)")
            }
            text = string
        }
        if !allowEmpty && text.isEmpty {
            throw error(at: key, "must not be empty")
        }
        return text
    }

    package func requiredString(_ key: String) throws -> String {
        guard let value = try string(key) else {
            throw error(at: key, "missing required key `\(key)`")
        }
        return value
    }

    func integer(_ key: String, in range: ClosedRange<Int>) throws -> Int? {
        let expectation = "must be an integer \(range.lowerBound)-\(range.upperBound)"
        let number: Int
        switch rawValue(key) {
        case nil:
            return nil
        case .override(let override):
            guard let parsed = Int(override.text.trimmingWhitespace()) else {
                throw error(at: key, "\(expectation), got \"\(override.text)\"")
            }
            number = parsed
        case .file(let value):
            guard let parsed = value.int else {
                throw error(at: key, "\(expectation), got \(value.typeName)")
            }
            number = parsed
        }
        guard range.contains(number) else {
            throw error(at: key, "\(expectation), got \(number)")
        }
        return number
    }

    func bool(_ key: String) throws -> Bool? {
        switch rawValue(key) {
        case nil:
            return nil
        case .override(let override):
            switch override.text.trimmingWhitespace() {
            case "true": return true
            case "false": return false
            default: throw error(at: key, "must be true or false, got \"\(override.text)\"")
            }
        case .file(let value):
            guard let bool = value.bool else {
                throw error(at: key, "must be true or false, got \(value.typeName)")
            }
            return bool
        }
    }

    /// One of a fixed set of string values.
    func choice<Choice: RawRepresentable & CaseIterable>(
        _ key: String,
        as type: Choice.Type = Choice.self
    ) throws -> Choice? where Choice.RawValue == String {
        let allowed = Choice.allCases.map(\.rawValue)
        if case .file(let value) = rawValue(key), value.string == nil {
            throw error(at: key, "must be a string, got \(value.typeName)", allowed: allowed)
        }
        guard let text = try string(key, allowEmpty: true) else {
            return nil
        }
        guard let choice = Choice(rawValue: text) else {
            throw error(at: key, "unknown value \"\(text)\"", allowed: allowed)
        }
        return choice
    }

    /// An integer number of seconds, or a string such as `"300s"`, `"5m"`, `"1h30m"`, `"7d"`.
    func duration(_ key: String, atLeast minimum: Duration = .zero) throws -> Duration? {
        let expectation =
            "must be a duration such as 300 (seconds), \"300s\", \"5m\", \"1h30m\" or \"7d\""
        guard
            let duration = try quantity(
                key, expectation, fromInteger: { .seconds($0) }, fromText: Duration.init(configurationText:))
        else { return nil }
        guard duration >= minimum else {
            throw error(at: key, "must be at least \(minimum.configurationText)")
        }
        return duration
    }

    /// A duration as `duration(_:atLeast:)` reads it, or `"off"` (and 0), which both give `.zero`.
    func durationOrOff(_ key: String) throws -> Duration? {
        switch rawValue(key) {
        case .override(let override) where override.text.trimmingWhitespace() == "off":
            return .zero
        case .file(let value) where value.string == "off":
            return .zero
        case nil, .override, .file:
            return try duration(key)
        }
    }

    /// A number of bytes, or a string such as `"512KiB"`, `"20MB"` or `"64MiB"`, within `range`.
    func byteCount(_ key: String, in range: ClosedRange<Int>) throws -> Int? {
        let expectation =
            "must be a size such as 1048576 (bytes), \"512KiB\", \"20MB\" or \"64MiB\""
            + " (KB/MB/GB = 1000^n, KiB/MiB/GiB = 1024^n)"
        guard let bytes = try quantity(key, expectation, fromInteger: { $0 }, fromText: Int.init(byteCountText:)) else {
            return nil
        }
        guard range.contains(bytes) else {
            throw error(
                at: key,
                "must be between \(range.lowerBound.byteCountText) and \(range.upperBound.byteCountText), got \(bytes.byteCountText)"
            )
        }
        return bytes
    }

    /// A quantity given as a non-negative integer in its base unit or as text with units (overrides
    /// are always text); `expectation` says what is allowed when it is neither.
    private func quantity<Value>(
        _ key: String, _ expectation: String, fromInteger: (Int) -> Value, fromText: (String) -> Value?
    ) throws -> Value? {
        switch rawValue(key) {
        case nil:
            return nil
        case .override(let override):
            guard let parsed = fromText(override.text) else {
                throw error(at: key, "\(expectation), got \"\(override.text)\"")
            }
            return parsed
        case .file(let value):
            if let number = value.int, number >= 0 {
                return fromInteger(number)
            }
            if let text = value.string, let parsed = fromText(text) {
                return parsed
            }
            let got = value.int.map(String.init) ?? value.string.map { "\"\($0)\"" } ?? value.typeName
            throw error(at: key, "\(expectation), got \(got)")
        }
    }

    /// An array of non-empty strings; its elements are reported as `key[index]`.
    func stringArray(_ key: String) throws -> [String]? {
        guard let value = table[key] else {
            return nil
        }
        guard let array = value.array else {
            throw error(at: key, "must be an array of strings, got \(value.typeName)")
        }
        return try array.enumerated().map { index, element in
            guard let string = element.string else {
                throw error(at: key, element: index, "must be a string, got \(element.typeName)")
            }
            guard !string.isEmpty else {
                throw error(at: key, element: index, "must not be empty")
            }
            return string
        }
    }

    /// A string array in which no value may appear twice.
    func uniqueStringArray(_ key: String) throws -> [String]? {
        guard let values = try stringArray(key) else {
            return nil
        }
        var seen: Set<String> = []
        for (index, value) in values.enumerated() where !seen.insert(value).inserted {
            throw error(at: key, element: index, "\"\(value)\" is listed twice")
        }
        return values
    }

    // MARK: Raw values

    private enum RawValue {
        case file(any TOMLValueConvertible)
        case override(OverrideValue)
    }

    private func rawValue(_ key: String) -> RawValue? {
        if let override = overrides[key] {
            return .override(override)
        }
        return table[key].map(RawValue.file)
    }
}

extension TOMLValueConvertible {
    /// The TOML type as an error message names it.
    var typeName: String {
        switch type {
        case .string: "string"
        case .int: "integer"
        case .double: "floating-point number"
        case .bool: "boolean"
        case .table: "table"
        case .array: isArrayOfTables ? "array of tables" : "array"
        case .date: "date"
        case .time: "time"
        case .dateTime: "date-time"
        }
    }

    var isArrayOfTables: Bool {
        guard let array else { return false }
        return !array.isEmpty && array.allSatisfy { $0.table != nil }
    }
}
