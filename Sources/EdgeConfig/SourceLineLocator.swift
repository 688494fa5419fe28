/// Finds the line of a key in TOML source text.
///
/// TOMLKit reports positions only for syntax errors, so semantic errors locate their key by
/// scanning the text: table headers split the document into sections (the n-th `[[listener]]`
/// header starts the n-th listener), and `key = …` lines inside a section give the key's line.
/// Multi-line strings and multi-line arrays are skipped so their contents are not mistaken for keys.
struct SourceLineLocator: Sendable {
    private struct Section: Sendable {
        /// Dotted header name without brackets; empty for the root section.
        var name: String
        var isArrayElement: Bool
        /// Index of this header among headers of the same name.
        var occurrence: Int
        /// 1-based line of the header; 0 for the root section.
        var headerLine: Int
        var keyLines: [String: Int] = [:]
    }

    private let sections: [Section]

    init(source: String) {
        var sections = [Section(name: "", isArrayElement: false, occurrence: 0, headerLine: 0)]
        var occurrences: [String: Int] = [:]
        var scanner = LineScanner()
        for (index, line) in source.split(separator: "\n", omittingEmptySubsequences: false)
            .enumerated()
        {
            switch scanner.classify(String(line)) {
            case .header(let name, let isArray):
                let occurrence = occurrences[name, default: 0]
                occurrences[name] = occurrence + 1
                sections.append(
                    Section(
                        name: name, isArrayElement: isArray, occurrence: occurrence,
                        headerLine: index + 1)
                )
            case .key(let key):
                if sections[sections.count - 1].keyLines[key] == nil {
                    sections[sections.count - 1].keyLines[key] = index + 1
                }
            case .other:
                break
            }
        }
        self.sections = sections
    }

    /// The line of `key` in the `occurrence`-th table with header `table` (nil: the root table).
    ///
    /// Without a key, or when the key is absent from the text, the table's header line is returned,
    /// which is the best place to add a missing key. A key that is itself a table (`[table.key]`)
    /// resolves to that sub-table's header.
    func line(ofKey key: String?, inTable table: String?, occurrence: Int = 0) -> Int? {
        let tableName = table ?? ""
        guard
            let sectionIndex = sections.firstIndex(where: {
                $0.name == tableName && $0.occurrence == occurrence
            })
        else {
            return nil
        }
        let section = sections[sectionIndex]
        guard let key else {
            return section.headerLine > 0 ? section.headerLine : nil
        }
        if let line = section.keyLines[key] {
            return line
        }
        let subTableName = tableName.isEmpty ? key : "\(tableName).\(key)"
        for candidate in sections[(sectionIndex + 1)...] {
            if candidate.name == tableName { break }
            if candidate.name == subTableName || candidate.name.hasPrefix(subTableName + ".") {
                return candidate.headerLine
            }
        }
        return section.headerLine > 0 ? section.headerLine : nil
    }
}

/// Classifies lines one by one, remembering whether it is inside a multi-line string or array.
private struct LineScanner {
    enum Kind: Equatable {
        case header(name: String, isArray: Bool)
        case key(String)
        case other
    }

    /// The closing delimiter of an open multi-line string.
    private var openMultilineString: String?
    /// Depth of `[` … `]` across lines of a multi-line array value.
    private var arrayDepth = 0

    mutating func classify(_ line: String) -> Kind {
        let startedInsideString = openMultilineString != nil
        let code = codeWithoutStringsAndComment(line)
        let depthBefore = arrayDepth
        for character in code {
            if character == "[" { arrayDepth += 1 }
            if character == "]" { arrayDepth = max(0, arrayDepth - 1) }
        }
        guard !startedInsideString, depthBefore == 0 else {
            return .other
        }
        let trimmed = line.trimmingWhitespace()
        if trimmed.hasPrefix("[") {
            // A header line's brackets are balanced; it never starts a multi-line value.
            arrayDepth = 0
            return Self.header(in: trimmed)
        }
        guard let equals = Self.keyEnd(in: trimmed) else {
            return .other
        }
        let rawKey = trimmed[..<equals]
        return .key(Self.normalizedKey(String(rawKey)))
    }

    /// The line's code with string contents and the trailing comment removed, tracking
    /// multi-line strings that span lines.
    private mutating func codeWithoutStringsAndComment(_ line: String) -> String {
        var code = ""
        var index = line.startIndex
        while index < line.endIndex {
            if let closing = openMultilineString {
                guard let range = line.range(of: closing, range: index..<line.endIndex) else {
                    return code
                }
                openMultilineString = nil
                index = range.upperBound
                continue
            }
            let rest = line[index...]
            if rest.hasPrefix("\"\"\"") || rest.hasPrefix("'''") {
                openMultilineString = String(rest.prefix(3))
                index = line.index(index, offsetBy: 3)
                continue
            }
            let character = line[index]
            if character == "#" {
                return code
            }
            if character == "\"" || character == "'" {
                index = Self.endOfSingleLineString(in: line, from: index)
                continue
            }
            code.append(character)
            index = line.index(after: index)
        }
        return code
    }

    private static func endOfSingleLineString(in line: String, from start: String.Index)
        -> String.Index
    {
        let quote = line[start]
        var index = line.index(after: start)
        while index < line.endIndex {
            if quote == "\"" && line[index] == "\\" {
                index = line.index(after: index)
                if index < line.endIndex { index = line.index(after: index) }
                continue
            }
            if line[index] == quote {
                return line.index(after: index)
            }
            index = line.index(after: index)
        }
        return line.endIndex
    }

    private static func header(in trimmed: String) -> Kind {
        let isArray = trimmed.hasPrefix("[[")
        let opening = isArray ? 2 : 1
        let closing = isArray ? "]]" : "]"
        let body = trimmed.dropFirst(opening)
        guard let end = body.range(of: closing) else {
            return .other
        }
        let name = body[..<end.lowerBound]
            .split(separator: ".")
            .map { normalizedKey(String($0)) }
            .joined(separator: ".")
        return .header(name: name, isArray: isArray)
    }

    /// Index of the `=` that ends the key of a `key = value` line, skipping quoted keys.
    private static func keyEnd(in trimmed: String) -> String.Index? {
        var index = trimmed.startIndex
        while index < trimmed.endIndex {
            let character = trimmed[index]
            if character == "\"" || character == "'" {
                index = endOfSingleLineString(in: trimmed, from: index)
                continue
            }
            if character == "=" {
                return index
            }
            if !(character.isLetter || character.isNumber || "_-. \t".contains(character)) {
                return nil
            }
            index = trimmed.index(after: index)
        }
        return nil
    }

    private static func normalizedKey(_ raw: String) -> String {
        let trimmed = raw.trimmingWhitespace()
        if trimmed.count >= 2, let first = trimmed.first, first == "\"" || first == "'",
            trimmed.last == first
        {
            return String(trimmed.dropFirst().dropLast())
        }
        return trimmed
    }
}

extension StringProtocol {
    /// The text without leading and trailing whitespace. Found from both ends in place: reversing the characters
    /// twice was most of the cost of locating keys, which every configuration load does.
    func trimmingWhitespace() -> String {
        guard let first = firstIndex(where: { !$0.isWhitespace }), let last = lastIndex(where: { !$0.isWhitespace })
        else { return "" }
        return String(self[first...last])
    }
}
