/// Why a byte sequence is not JSON, and where the parser noticed.
package struct JSONParseError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Byte offset into the input.
    package var offset: Int
    package var reason: String

    package var description: String { "\(reason) at byte \(offset)" }
}

extension JSONValue {
    /// Nesting beyond this is refused, so hostile input cannot exhaust the stack.
    package static let maximumNestingDepth = 200

    /// Parses one strict RFC 8259 JSON text: no trailing commas, comments, duplicate keys, leading
    /// zeros, unescaped control characters, lone surrogates or invalid UTF-8.
    package init(parsing bytes: [UInt8]) throws(JSONParseError) {
        var scanner = JSONScanner(bytes: bytes)
        self = try scanner.parseDocument()
    }

    package init(parsing text: String) throws(JSONParseError) {
        try self.init(parsing: Array(text.utf8))
    }
}

struct JSONScanner {
    let bytes: [UInt8]
    var index = 0

    init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    mutating func parseDocument() throws(JSONParseError) -> JSONValue {
        skipWhitespace()
        let value = try parseValue(depth: 0)
        skipWhitespace()
        guard index == bytes.count else {
            throw fail("unexpected data after the JSON value")
        }
        return value
    }

    private func fail(_ reason: String) -> JSONParseError {
        JSONParseError(offset: index, reason: reason)
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    private mutating func parseValue(depth: Int) throws(JSONParseError) -> JSONValue {
        guard index < bytes.count else { throw fail("unexpected end of input") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return .object(try parseObject(depth: depth + 1))
        case UInt8(ascii: "["): return .array(try parseArray(depth: depth + 1))
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"):
            try expectLiteral("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try expectLiteral("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try expectLiteral("null")
            return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            let start = index
            guard Self.scanNumber(bytes, &index) else { throw fail("malformed number") }
            return .number(JSONNumber(validatedText: String(decoding: bytes[start..<index], as: UTF8.self)))
        default:
            throw fail("unexpected character '\(Self.printable(bytes[index]))'")
        }
    }

    private mutating func expectLiteral(_ literal: String) throws(JSONParseError) {
        let expected = literal.utf8
        guard index + expected.count <= bytes.count, bytes[index..<index + expected.count].elementsEqual(expected)
        else { throw fail("invalid literal") }
        index += expected.count
    }

    private mutating func parseObject(depth: Int) throws(JSONParseError) -> JSONObject {
        guard depth <= JSONValue.maximumNestingDepth else { throw fail("nesting is too deep") }
        index += 1
        var object = JSONObject()
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            return object
        }
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else {
                throw fail("expected a string key")
            }
            let keyOffset = index
            let key = try parseString()
            guard object[key] == nil else {
                throw JSONParseError(offset: keyOffset, reason: "duplicate key \"\(key)\"")
            }
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw fail("expected ':'") }
            index += 1
            skipWhitespace()
            object[key] = try parseValue(depth: depth)
            skipWhitespace()
            guard index < bytes.count else { throw fail("unterminated object") }
            switch bytes[index] {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "}"):
                index += 1
                return object
            default: throw fail("expected ',' or '}'")
            }
        }
    }

    private mutating func parseArray(depth: Int) throws(JSONParseError) -> [JSONValue] {
        guard depth <= JSONValue.maximumNestingDepth else { throw fail("nesting is too deep") }
        index += 1
        var array: [JSONValue] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            return array
        }
        while true {
            skipWhitespace()
            array.append(try parseValue(depth: depth))
            skipWhitespace()
            guard index < bytes.count else { throw fail("unterminated array") }
            switch bytes[index] {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "]"):
                index += 1
                return array
            default: throw fail("expected ',' or ']'")
            }
        }
    }

    /// Most strings have no escapes and are ASCII: those become a `String` straight from their bytes, with
    /// no intermediate buffer and no separate UTF-8 validation pass.
    private mutating func parseString() throws(JSONParseError) -> String {
        let start = index
        index += 1
        let contentStart = index
        // Non-ASCII bytes can only be among those that end a plain run.
        var unionOfBytes: UInt8 = 0
        while index < bytes.count {
            index = bytes.withUnsafeBytes { JSONStringBytes.endOfPlainRun(in: $0, from: index) }
            guard index < bytes.count else { break }
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let content = bytes[contentStart..<index]
                index += 1
                return try Self.string(content, isASCII: unionOfBytes < 0x80, offset: start)
            } else if byte == UInt8(ascii: "\\") {
                return try parseEscapedString(start: start, unescapedPrefix: bytes[contentStart..<index])
            } else if byte < 0x20 {
                throw fail("unescaped control character in string")
            }
            unionOfBytes |= byte
            index += 1
        }
        throw JSONParseError(offset: start, reason: "unterminated string")
    }

    /// The rest of a string from its first escape on, decoded into a buffer.
    private mutating func parseEscapedString(
        start: Int, unescapedPrefix: ArraySlice<UInt8>
    ) throws(JSONParseError) -> String {
        var decoded = Array(unescapedPrefix)
        var runStart = index
        while true {
            guard index < bytes.count else {
                throw JSONParseError(offset: start, reason: "unterminated string")
            }
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                decoded.append(contentsOf: bytes[runStart..<index])
                index += 1
                break
            } else if byte == UInt8(ascii: "\\") {
                decoded.append(contentsOf: bytes[runStart..<index])
                try parseEscape(into: &decoded)
                runStart = index
            } else if byte < 0x20 {
                throw fail("unescaped control character in string")
            } else {
                index = bytes.withUnsafeBytes { JSONStringBytes.endOfPlainRun(in: $0, from: index + 1) }
            }
        }
        return try Self.string(decoded[...], isASCII: false, offset: start)
    }

    /// ASCII needs no validation; anything else goes through the standard library's UTF-8 check.
    private static func string(
        _ content: ArraySlice<UInt8>, isASCII: Bool, offset: Int
    ) throws(JSONParseError) -> String {
        if isASCII {
            return String(decoding: content, as: UTF8.self)
        }
        guard let string = String(validating: content, as: UTF8.self) else {
            throw JSONParseError(offset: offset, reason: "string is not valid UTF-8")
        }
        return string
    }

    private mutating func parseEscape(into decoded: inout [UInt8]) throws(JSONParseError) {
        index += 1
        guard index < bytes.count else { throw fail("unterminated escape") }
        let code = bytes[index]
        index += 1
        switch code {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): decoded.append(code)
        case UInt8(ascii: "b"): decoded.append(0x08)
        case UInt8(ascii: "f"): decoded.append(0x0C)
        case UInt8(ascii: "n"): decoded.append(0x0A)
        case UInt8(ascii: "r"): decoded.append(0x0D)
        case UInt8(ascii: "t"): decoded.append(0x09)
        case UInt8(ascii: "u"):
            var scalar = try parseHexQuad()
            if (0xD800..<0xDC00).contains(scalar) {
                guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u")
                else { throw fail("high surrogate without a low surrogate") }
                index += 2
                let low = try parseHexQuad()
                guard (0xDC00..<0xE000).contains(low) else { throw fail("invalid low surrogate") }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            } else if (0xDC00..<0xE000).contains(scalar) {
                throw fail("lone low surrogate")
            }
            guard let unicode = Unicode.Scalar(scalar) else { throw fail("invalid unicode escape") }
            decoded.append(contentsOf: Array(String(Character(unicode)).utf8))
        default:
            throw fail("invalid escape '\\\(Self.printable(code))'")
        }
    }

    private mutating func parseHexQuad() throws(JSONParseError) -> UInt32 {
        guard index + 4 <= bytes.count else { throw fail("truncated unicode escape") }
        guard let value = bytes.withUnsafeBytes({ JSONStringBytes.hexQuad(in: $0, at: index) }) else {
            throw fail("invalid hex digit in unicode escape")
        }
        index += 4
        return value
    }

    /// Advances past one JSON number; false if the bytes at `index` are not one.
    /// Shared with `JSONBodyScan`, so that both read numbers by one grammar.
    static func scanNumber<Bytes: RandomAccessCollection<UInt8>>(_ bytes: Bytes, _ index: inout Int) -> Bool
    where Bytes.Index == Int {
        func isDigit(_ at: Int) -> Bool {
            at < bytes.count && bytes[at] >= UInt8(ascii: "0") && bytes[at] <= UInt8(ascii: "9")
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard isDigit(index) else { return false }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
        } else {
            while isDigit(index) { index += 1 }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard isDigit(index) else { return false }
            while isDigit(index) { index += 1 }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                index += 1
            }
            guard isDigit(index) else { return false }
            while isDigit(index) { index += 1 }
        }
        return true
    }

    private static func printable(_ byte: UInt8) -> String {
        (0x21..<0x7F).contains(byte) ? String(UnicodeScalar(byte)) : "0x" + String(byte, radix: 16)
    }
}
