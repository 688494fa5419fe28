import Foundation
import JSONByteScanning

/// Validates a document body (a JSON object) in one pass over its bytes and collects the blob
/// digests it references, without building a Foundation object tree: the replicator's batched
/// insert path runs this for every revision, so it has to cost far less than the SQLite insert.
///
/// Blob references are CBL blob dictionaries anywhere in the tree (`"@type":"blob"` with a
/// `digest`), and entries of a top-level legacy `_attachments` dictionary that carry a `digest`.
struct JSONBodyScanner {
    /// Deeper nesting is rejected rather than risking the stack on hostile input.
    static let maxDepth = 256

    /// Scans `body`; throws `StoreError.invalidJSON` unless it is a single JSON object.
    static func blobDigests(in body: Data) throws(StoreError) -> Set<String> {
        let result: Result<Set<String>, StoreError> = body.withUnsafeBytes { raw in
            var scanner = JSONBodyScanner(bytes: raw.bindMemory(to: UInt8.self))
            do throws(StoreError) {
                return .success(try scanner.scanDocument())
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    private enum ObjectRole {
        case root, plain, attachmentsContainer, attachmentEntry
    }

    private let bytes: UnsafeBufferPointer<UInt8>
    private var position = 0
    private var digests: Set<String> = []

    private init(bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    private mutating func scanDocument() throws(StoreError) -> Set<String> {
        skipWhitespace()
        guard peek() == UInt8(ascii: "{") else {
            throw failure("a document body must be a JSON object")
        }
        try scanObject(role: .root, depth: 1)
        skipWhitespace()
        guard position == bytes.count else {
            throw failure("unexpected data after the JSON object")
        }
        return digests
    }

    private mutating func scanValue(role: ObjectRole, depth: Int) throws(StoreError) {
        guard depth <= Self.maxDepth else {
            throw failure("nesting deeper than \(Self.maxDepth) levels")
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

    private mutating func scanObject(role: ObjectRole, depth: Int) throws(StoreError) {
        position += 1  // "{"
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
            skipWhitespace()
            guard peek() == UInt8(ascii: ":") else { throw failure("expected ':' after a key") }
            position += 1
            skipWhitespace()
            if peek() == UInt8(ascii: "\""), key.equals("@type") || key.equals("digest") {
                let value = try scanString()
                if key.equals("@type") {
                    isBlobType = value.equals("blob")
                } else {
                    digest = value.decoded(in: bytes)
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

    private mutating func scanArray(depth: Int) throws(StoreError) {
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

    /// A scanned string: its raw byte range (without quotes) and whether it contains escapes.
    private struct ScannedString {
        let base: UnsafeBufferPointer<UInt8>
        let range: Range<Int>
        let hasEscapes: Bool

        func equals(_ literal: StaticString) -> Bool {
            if hasEscapes { return decoded(in: base) == literal.description }
            guard range.count == literal.utf8CodeUnitCount else { return false }
            let literalBytes = UnsafeBufferPointer(
                start: literal.utf8Start, count: literal.utf8CodeUnitCount)
            return base[range].elementsEqual(literalBytes)
        }

        func decoded(in bytes: UnsafeBufferPointer<UInt8>) -> String {
            let raw = Data(bytes[range])
            guard hasEscapes else { return String(decoding: raw, as: UTF8.self) }
            // The string already passed validation, so JSONSerialization cannot fail on it.
            let quoted = Data([UInt8(ascii: "\"")]) + raw + Data([UInt8(ascii: "\"")])
            let value = try? JSONSerialization.jsonObject(
                with: quoted, options: [.fragmentsAllowed])
            return value as? String ?? String(decoding: raw, as: UTF8.self)
        }
    }

    private mutating func scanString() throws(StoreError) -> ScannedString {
        position += 1  // opening quote
        let start = position
        var hasEscapes = false
        while position < bytes.count {
            let byte = bytes[position]
            switch byte {
            case UInt8(ascii: "\""):
                let string = ScannedString(
                    base: bytes, range: start..<position, hasEscapes: hasEscapes)
                position += 1
                return string
            case UInt8(ascii: "\\"):
                hasEscapes = true
                try scanEscape()
            case 0..<0x20:
                throw failure("unescaped control character in a string")
            case 0x80...:
                try scanUTF8Sequence()
            default:
                position = JSONStringBytes.endOfPlainRun(in: UnsafeRawBufferPointer(bytes), from: position + 1)
            }
        }
        throw failure("unterminated string")
    }

    private mutating func scanEscape() throws(StoreError) {
        position += 1  // backslash
        guard let escaped = peek() else { throw failure("unterminated escape") }
        position += 1
        switch escaped {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"),
            UInt8(ascii: "f"),
            UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
            return
        case UInt8(ascii: "u"):
            guard JSONStringBytes.hexQuad(in: UnsafeRawBufferPointer(bytes), at: position) != nil else {
                throw failure("invalid \\u escape")
            }
            position += 4
        default:
            throw failure("invalid escape sequence")
        }
    }

    private mutating func scanUTF8Sequence() throws(StoreError) {
        guard let length = JSONStringBytes.multibyteScalarLength(in: UnsafeRawBufferPointer(bytes), at: position)
        else { throw failure("invalid UTF-8") }
        position += length
    }

    private mutating func scanNumber() throws(StoreError) {
        if peek() == UInt8(ascii: "-") { position += 1 }
        guard let first = peek(), isDigit(first) else { throw failure("invalid number") }
        position += 1
        if first != UInt8(ascii: "0") { skipDigits() }
        if peek() == UInt8(ascii: ".") {
            position += 1
            guard let digit = peek(), isDigit(digit) else { throw failure("invalid number") }
            skipDigits()
        }
        if peek() == UInt8(ascii: "e") || peek() == UInt8(ascii: "E") {
            position += 1
            if peek() == UInt8(ascii: "+") || peek() == UInt8(ascii: "-") { position += 1 }
            guard let digit = peek(), isDigit(digit) else { throw failure("invalid number") }
            skipDigits()
        }
    }

    private mutating func expectLiteral(_ literal: StaticString) throws(StoreError) {
        let count = literal.utf8CodeUnitCount
        let literalBytes = UnsafeBufferPointer(start: literal.utf8Start, count: count)
        guard position + count <= bytes.count,
            bytes[position..<position + count].elementsEqual(literalBytes)
        else {
            throw failure("invalid literal")
        }
        position += count
    }

    private mutating func skipDigits() {
        while let byte = peek(), isDigit(byte) { position += 1 }
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

    private func failure(_ reason: String) -> StoreError {
        .invalidJSON(reason: "\(reason) at byte \(position)")
    }
}
