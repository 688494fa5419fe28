import JSONByteScanning

extension DocumentBody {
    /// Whether `bytes` is a JSON object that can be stored exactly as it came: no top-level `_` property to
    /// strip or refuse, and no `@type` key at any depth, so no blob to fetch. One pass over the bytes decides,
    /// without building a `JSONValue` tree; almost every received body is like this.
    ///
    /// It only ever vouches for bodies that `JSONValue(parsing:)` accepts. It answers false for anything it
    /// is unsure of (invalid JSON, keys with escapes or non-ASCII characters, objects wider than
    /// `PlainBodyScanner.maximumKeysPerObject`), and such a body takes the full parse, which gives the precise
    /// error.
    public static func isPlain(_ bytes: [UInt8]) -> Bool {
        var scanner = PlainBodyScanner(bytes: bytes)
        return scanner.scanDocument()
    }
}

/// The scan behind `DocumentBody.isPlain`. It follows the rules of `JSONScanner`: the same grammar, nesting
/// limit, duplicate-key refusal, escape and surrogate rules, and UTF-8 validation.
struct PlainBodyScanner {
    /// Checking a wider object for duplicate keys pairwise costs more than the full parse saves.
    static let maximumKeysPerObject = 64

    private let bytes: [UInt8]
    private var index = 0
    /// Key ranges of the objects being scanned, innermost last, shared by every level so that a scan
    /// allocates once.
    private var keys: [Range<Int>] = []

    init(bytes: [UInt8]) {
        self.bytes = bytes
        keys.reserveCapacity(32)
    }

    mutating func scanDocument() -> Bool {
        skipWhitespace()
        guard index < bytes.count, bytes[index] == UInt8(ascii: "{"), scanObject(depth: 1, isRoot: true) else {
            return false
        }
        skipWhitespace()
        return index == bytes.count
    }

    private mutating func scanValue(depth: Int) -> Bool {
        guard index < bytes.count else { return false }
        switch bytes[index] {
        case UInt8(ascii: "{"): return scanObject(depth: depth + 1, isRoot: false)
        case UInt8(ascii: "["): return scanArray(depth: depth + 1)
        case UInt8(ascii: "\""): return scanString(isKey: false) != nil
        case UInt8(ascii: "t"): return skipLiteral("true")
        case UInt8(ascii: "f"): return skipLiteral("false")
        case UInt8(ascii: "n"): return skipLiteral("null")
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return JSONScanner.scanNumber(bytes, &index)
        default: return false
        }
    }

    private mutating func scanObject(depth: Int, isRoot: Bool) -> Bool {
        guard depth <= JSONValue.maximumNestingDepth else { return false }
        index += 1  // "{"
        let firstKey = keys.count
        defer { keys.removeSubrange(firstKey...) }
        skipWhitespace()
        if skip(UInt8(ascii: "}")) { return true }
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\""),
                let key = scanString(isKey: true)
            else { return false }
            if isRoot, !key.isEmpty, bytes[key.lowerBound] == UInt8(ascii: "_") { return false }
            if matches(key, "@type") { return false }
            guard keys.count - firstKey < Self.maximumKeysPerObject else { return false }
            for earlier in keys[firstKey...] where bytes[earlier].elementsEqual(bytes[key]) {
                return false
            }
            keys.append(key)
            skipWhitespace()
            guard skip(UInt8(ascii: ":")) else { return false }
            skipWhitespace()
            guard scanValue(depth: depth) else { return false }
            guard let closed = scanSeparator(closing: UInt8(ascii: "}")) else { return false }
            if closed { return true }
        }
    }

    private mutating func scanArray(depth: Int) -> Bool {
        guard depth <= JSONValue.maximumNestingDepth else { return false }
        index += 1  // "["
        skipWhitespace()
        if skip(UInt8(ascii: "]")) { return true }
        while true {
            skipWhitespace()
            guard scanValue(depth: depth) else { return false }
            guard let closed = scanSeparator(closing: UInt8(ascii: "]")) else { return false }
            if closed { return true }
        }
    }

    /// After a member or element: true at the container's `closing` byte, false at a comma, `nil` at anything
    /// else.
    private mutating func scanSeparator(closing: UInt8) -> Bool? {
        skipWhitespace()
        if skip(UInt8(ascii: ",")) { return false }
        if skip(closing) { return true }
        return nil
    }

    /// Steps over `byte` if it is next.
    private mutating func skip(_ byte: UInt8) -> Bool {
        guard index < bytes.count, bytes[index] == byte else { return false }
        index += 1
        return true
    }

    /// Scans a string from its opening quote; returns the range of its raw contents, or nil if it is not
    /// valid. A key must also be plain ASCII without escapes, so that equal keys are equal bytes: an escape
    /// could hide a duplicate or a `_`, and Swift compares non-ASCII strings by canonical equivalence.
    private mutating func scanString(isKey: Bool) -> Range<Int>? {
        index += 1  // opening quote
        let start = index
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                return start..<(index - 1)
            case UInt8(ascii: "\\"):
                guard !isKey, scanEscape() else { return nil }
            case 0..<0x20:
                return nil
            case 0x80...:
                guard !isKey, let length = bytes.withUnsafeBytes({ JSONStringBytes.multibyteScalarLength(in: $0, at: index) })
                else { return nil }
                index += length
            default:
                index = bytes.withUnsafeBytes { JSONStringBytes.endOfPlainRun(in: $0, from: index + 1) }
            }
        }
        return nil
    }

    private mutating func scanEscape() -> Bool {
        index += 1  // backslash
        guard index < bytes.count else { return false }
        let code = bytes[index]
        index += 1
        switch code {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
            UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
            return true
        case UInt8(ascii: "u"):
            guard let unit = scanHexQuad() else { return false }
            switch unit {
            case 0xD800..<0xDC00:
                guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u")
                else { return false }
                index += 2
                guard let low = scanHexQuad() else { return false }
                return (0xDC00..<0xE000).contains(low)
            case 0xDC00..<0xE000:
                return false
            default:
                return true
            }
        default:
            return false
        }
    }

    private mutating func scanHexQuad() -> UInt32? {
        guard let value = bytes.withUnsafeBytes({ JSONStringBytes.hexQuad(in: $0, at: index) }) else { return nil }
        index += 4
        return value
    }

    private mutating func skipLiteral(_ literal: StaticString) -> Bool {
        let count = literal.utf8CodeUnitCount
        guard index + count <= bytes.count else { return false }
        let matched = literal.withUTF8Buffer { bytes[index..<(index + count)].elementsEqual($0) }
        index += count
        return matched
    }

    private func matches(_ range: Range<Int>, _ literal: StaticString) -> Bool {
        range.count == literal.utf8CodeUnitCount && literal.withUTF8Buffer { bytes[range].elementsEqual($0) }
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }
}
