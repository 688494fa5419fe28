/// One pass over a document body's bytes, for everything the hot paths need to know about it without building
/// a `JSONValue` tree: whether it is a valid JSON object, which blobs it refers to, and whether it is plain
/// enough to be stored and sent exactly as it came. A received revision is scanned once, and the store takes
/// the scan with the body rather than scanning it again.
///
/// Blob references are Couchbase Lite blob dictionaries anywhere in the tree (`"@type":"blob"` with a
/// `digest`), and entries of a top-level legacy `_attachments` dictionary that carry a `digest`.
public struct JSONBodyScan: Sendable, Equatable {
    /// The digests of the blobs the body refers to, as written.
    package let blobDigests: Set<String>
    /// No top-level `_` property to strip or refuse, and no `@type` key at any depth, so no blob: the body can
    /// be kept exactly as it came. It only ever vouches for bodies that `JSONValue(parsing:)` accepts, and is
    /// false for anything the scan is unsure of (keys with escapes or non-ASCII characters, objects wider than
    /// `maximumPlainObjectWidth`, lone surrogates, nesting beyond `JSONValue.maximumNestingDepth`); such a body
    /// takes the full parse, which gives the precise error.
    package let isPlain: Bool

    /// Deeper nesting is refused rather than risking the stack on hostile input.
    package static let maximumDepth = 256
    /// Checking a wider object for duplicate keys pairwise costs more than the full parse saves.
    package static let maximumPlainObjectWidth = 64

    /// Scans `body`; throws unless it is a single JSON object.
    package init(scanning body: UnsafeRawBufferPointer) throws(JSONBodyError) {
        var scanner = Scanner(bytes: body.bindMemory(to: UInt8.self))
        try scanner.scanDocument()
        blobDigests = scanner.digests
        isPlain = scanner.isPlain
    }

    package init(scanning body: [UInt8]) throws(JSONBodyError) {
        let result: Result<JSONBodyScan, JSONBodyError> = body.withUnsafeBytes { raw in
            do throws(JSONBodyError) {
                return .success(try JSONBodyScan(scanning: raw))
            } catch {
                return .failure(error)
            }
        }
        self = try result.get()
    }
}

/// Why a document body is not a JSON object, and where the scan noticed.
package struct JSONBodyError: Error, Sendable, Equatable, CustomStringConvertible {
    package var reason: String
    /// Byte offset into the body.
    package var offset: Int

    package var description: String { "\(reason) at byte \(offset)" }
}

extension JSONBodyScan {
    private struct Scanner {
        private enum ObjectRole {
            case root, plain, attachmentsContainer, attachmentEntry
        }

        private let bytes: UnsafeBufferPointer<UInt8>
        private var position = 0
        var digests: Set<String> = []
        var isPlain = true
        /// Key ranges of the objects being scanned while the body may still be plain, innermost last, shared by
        /// every level so that a scan allocates once.
        private var keys: [Range<Int>] = []

        init(bytes: UnsafeBufferPointer<UInt8>) {
            self.bytes = bytes
            keys.reserveCapacity(32)
        }

        mutating func scanDocument() throws(JSONBodyError) {
            skipWhitespace()
            guard peek() == UInt8(ascii: "{") else {
                throw failure("a document body must be a JSON object")
            }
            try scanObject(role: .root, depth: 1)
            skipWhitespace()
            guard position == bytes.count else {
                throw failure("unexpected data after the JSON object")
            }
        }

        private mutating func scanValue(role: ObjectRole, depth: Int) throws(JSONBodyError) {
            guard depth <= JSONBodyScan.maximumDepth else {
                throw failure("nesting deeper than \(JSONBodyScan.maximumDepth) levels")
            }
            switch peek() {
            case UInt8(ascii: "{"): try scanObject(role: role, depth: depth)
            case UInt8(ascii: "["): try scanArray(depth: depth)
            case UInt8(ascii: "\""): _ = try scanString()
            case UInt8(ascii: "t"): try expectLiteral("true")
            case UInt8(ascii: "f"): try expectLiteral("false")
            case UInt8(ascii: "n"): try expectLiteral("null")
            case .some(let byte) where byte == UInt8(ascii: "-") || isDigit(byte): try scanNumber()
            case .some: throw failure("unexpected character")
            case nil: throw failure("unexpected end of data")
            }
        }

        private mutating func scanObject(role: ObjectRole, depth: Int) throws(JSONBodyError) {
            if depth > JSONValue.maximumNestingDepth { isPlain = false }
            position += 1  // "{"
            let firstKey = keys.count
            defer { keys.removeSubrange(firstKey...) }
            var isBlobType = false
            var digest: String?
            skipWhitespace()
            if peek() == UInt8(ascii: "}") {
                position += 1
                return
            }
            while true {
                skipWhitespace()
                guard peek() == UInt8(ascii: "\"") else { throw failure("expected a string key") }
                let key = try scanString()
                if isPlain { notePlainness(ofKey: key, isRoot: role == .root, firstKey: firstKey) }
                skipWhitespace()
                guard peek() == UInt8(ascii: ":") else { throw failure("expected ':' after a key") }
                position += 1
                skipWhitespace()
                if peek() == UInt8(ascii: "\""), key.equals("@type") || key.equals("digest") {
                    let value = try scanString()
                    if key.equals("@type") {
                        isBlobType = value.equals("blob")
                    } else {
                        digest = value.decoded()
                    }
                } else {
                    let childRole: ObjectRole
                    switch role {
                    case .root where key.equals("_attachments"): childRole = .attachmentsContainer
                    case .attachmentsContainer: childRole = .attachmentEntry
                    default: childRole = .plain
                    }
                    try scanValue(role: childRole, depth: depth + 1)
                }
                skipWhitespace()
                switch peek() {
                case UInt8(ascii: ","): position += 1
                case UInt8(ascii: "}"):
                    position += 1
                    if let digest, isBlobType || role == .attachmentEntry { digests.insert(digest) }
                    return
                default: throw failure("expected ',' or '}' in an object")
                }
            }
        }

        /// A key keeps the body plain if it is plain ASCII without escapes (so that equal keys are equal bytes:
        /// an escape could hide a duplicate or a `_`), is neither a top-level `_` property nor `@type`, and is
        /// not a duplicate within an object of at most `maximumPlainObjectWidth` keys.
        private mutating func notePlainness(ofKey key: ScannedString, isRoot: Bool, firstKey: Int) {
            let range = key.range
            guard !key.hasEscapes, !key.hasNonASCII,
                !(isRoot && !range.isEmpty && bytes[range.lowerBound] == UInt8(ascii: "_")),
                !key.equals("@type"),
                keys.count - firstKey < JSONBodyScan.maximumPlainObjectWidth,
                !keys[firstKey...].contains(where: { bytes[$0].elementsEqual(bytes[range]) })
            else {
                isPlain = false
                return
            }
            keys.append(range)
        }

        private mutating func scanArray(depth: Int) throws(JSONBodyError) {
            if depth > JSONValue.maximumNestingDepth { isPlain = false }
            position += 1  // "["
            skipWhitespace()
            if peek() == UInt8(ascii: "]") {
                position += 1
                return
            }
            while true {
                skipWhitespace()
                try scanValue(role: .plain, depth: depth + 1)
                skipWhitespace()
                switch peek() {
                case UInt8(ascii: ","): position += 1
                case UInt8(ascii: "]"):
                    position += 1
                    return
                default: throw failure("expected ',' or ']' in an array")
                }
            }
        }

        /// A scanned string: its raw byte range (without quotes), and what it contains besides plain ASCII.
        private struct ScannedString {
            let base: UnsafeBufferPointer<UInt8>
            let range: Range<Int>
            let hasEscapes: Bool
            let hasNonASCII: Bool

            func equals(_ literal: StaticString) -> Bool {
                if hasEscapes { return decoded() == literal.description }
                guard range.count == literal.utf8CodeUnitCount else { return false }
                let literalBytes = UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount)
                return base[range].elementsEqual(literalBytes)
            }

            /// The string's value; the scan already checked its escapes and UTF-8.
            func decoded() -> String {
                guard hasEscapes else { return String(decoding: base[range], as: UTF8.self) }
                let quoted = [UInt8(ascii: "\"")] + Array(base[range]) + [UInt8(ascii: "\"")]
                return (try? JSONValue(parsing: quoted))?.stringValue ?? String(decoding: base[range], as: UTF8.self)
            }
        }

        private mutating func scanString() throws(JSONBodyError) -> ScannedString {
            position += 1  // opening quote
            let start = position
            var hasEscapes = false
            var hasNonASCII = false
            while position < bytes.count {
                let byte = bytes[position]
                switch byte {
                case UInt8(ascii: "\""):
                    let string = ScannedString(
                        base: bytes, range: start..<position, hasEscapes: hasEscapes, hasNonASCII: hasNonASCII)
                    position += 1
                    return string
                case UInt8(ascii: "\\"):
                    hasEscapes = true
                    try scanEscape()
                case 0..<0x20:
                    throw failure("unescaped control character in a string")
                case 0x80...:
                    hasNonASCII = true
                    guard
                        let length = JSONStringBytes.multibyteScalarLength(
                            in: UnsafeRawBufferPointer(bytes), at: position)
                    else { throw failure("invalid UTF-8") }
                    position += length
                default:
                    position = JSONStringBytes.endOfPlainRun(in: UnsafeRawBufferPointer(bytes), from: position + 1)
                }
            }
            throw failure("unterminated string")
        }

        private mutating func scanEscape() throws(JSONBodyError) {
            position += 1  // backslash
            guard let escaped = peek() else { throw failure("unterminated escape") }
            position += 1
            switch escaped {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
                UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                return
            case UInt8(ascii: "u"):
                guard let unit = scanHexQuad() else { throw failure("invalid \\u escape") }
                // The store keeps lone surrogates as they came; `JSONValue` refuses them, so such a body is not
                // plain.
                switch unit {
                case 0xD800..<0xDC00:
                    guard position + 1 < bytes.count, bytes[position] == UInt8(ascii: "\\"),
                        bytes[position + 1] == UInt8(ascii: "u")
                    else {
                        isPlain = false
                        return
                    }
                    position += 2
                    guard let low = scanHexQuad() else { throw failure("invalid \\u escape") }
                    if !(0xDC00..<0xE000).contains(low) { isPlain = false }
                case 0xDC00..<0xE000:
                    isPlain = false
                default:
                    return
                }
            default:
                throw failure("invalid escape sequence")
            }
        }

        private mutating func scanHexQuad() -> UInt32? {
            guard let value = JSONStringBytes.hexQuad(in: UnsafeRawBufferPointer(bytes), at: position) else {
                return nil
            }
            position += 4
            return value
        }

        private mutating func scanNumber() throws(JSONBodyError) {
            guard JSONScanner.scanNumber(bytes, &position) else { throw failure("invalid number") }
        }

        private mutating func expectLiteral(_ literal: StaticString) throws(JSONBodyError) {
            let count = literal.utf8CodeUnitCount
            let literalBytes = UnsafeBufferPointer(start: literal.utf8Start, count: count)
            guard position + count <= bytes.count, bytes[position..<position + count].elementsEqual(literalBytes)
            else {
                throw failure("invalid literal")
            }
            position += count
        }

        private mutating func skipWhitespace() {
            while let byte = peek(),
                byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r")
                    || byte == UInt8(ascii: "\t")
            {
                position += 1
            }
        }

        private func peek() -> UInt8? {
            position < bytes.count ? bytes[position] : nil
        }

        private func isDigit(_ byte: UInt8) -> Bool {
            byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
        }

        private func failure(_ reason: String) -> JSONBodyError {
            JSONBodyError(reason: reason, offset: position)
        }
    }
}
