/// Refuses, with a clear error, the inputs on which the TOML parser (toml++ 3.4.0, inside TOMLKit) fails an
/// internal assertion instead of reporting a syntax error: in a debug build that aborts the process, with NDEBUG
/// defined the assertion is an optimiser assumption and the behaviour is undefined. Found by fuzzing (RELIABILITY.md,
/// "Hostile input"); minimal inputs: `[{`, `a=[}`, `t=1979-05-27T:`.
///
/// - A table header whose `[` or `[[` is followed (after blanks) by anything but a bare key character or a
///   quote, e.g. `[{`, `[#`, `[=`, `[[[`.
/// - A `}` inside an array, where a value or `]` is expected, e.g. `a = [}`.
/// - A date followed by `T` (or `t`), then not a digit, and a colon later in the value, e.g. `1979-05-27T:` or
///   `1979-05-27TA:`.
///
/// The scan skips strings and comments and tracks brackets, so it only looks where the parser would: it refuses
/// no valid TOML, since in valid TOML a `[` that opens a line outside any value is always a table header.
enum TOMLParserGuard {
    struct Refusal: Error, Equatable {
        var line: Int
        var column: Int
        var message: String
    }

    static func check(_ text: String) throws(Refusal) {
        var scanner = Scanner(bytes: Array(text.utf8))
        try scanner.run()
    }

    private struct Scanner {
        let bytes: [UInt8]
        var index = 0
        var line = 1
        var lineStart = 0
        /// The brackets and braces open inside a value, innermost last: a `[` at the start of a line is a table
        /// header only when none is open.
        var open: [UInt8] = []
        /// Only blanks since the last newline.
        var atLineStart = true

        init(bytes: [UInt8]) {
            self.bytes = bytes
        }

        func byte(at offset: Int) -> UInt8? {
            offset < bytes.count ? bytes[offset] : nil
        }

        func refusal(at offset: Int, _ message: String) -> Refusal {
            Refusal(line: line, column: offset - lineStart + 1, message: message)
        }

        static func isBareKeyByte(_ byte: UInt8) -> Bool {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "-"):
                true
            default:
                false
            }
        }

        static func isDigit(_ byte: UInt8?) -> Bool {
            byte.map { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") } ?? false
        }

        mutating func newline() {
            line += 1
            lineStart = index + 1
            atLineStart = true
        }

        /// Skips a string opening at `index` (its quote), multi-line or not, to just past its end.
        mutating func skipString() {
            let quote = bytes[index]
            let multiLine = byte(at: index + 1) == quote && byte(at: index + 2) == quote
            index += multiLine ? 3 : 1
            while index < bytes.count {
                let current = bytes[index]
                if current == UInt8(ascii: "\\") && quote == UInt8(ascii: "\"") {
                    // An escaped character; a backslash ending a line leaves the newline to be counted.
                    index += byte(at: index + 1) == UInt8(ascii: "\n") ? 1 : 2
                    continue
                }
                if current == UInt8(ascii: "\n") {
                    guard multiLine else { return }
                    newline()
                    atLineStart = false
                } else if current == quote {
                    if !multiLine {
                        index += 1
                        return
                    }
                    if byte(at: index + 1) == quote && byte(at: index + 2) == quote {
                        // Up to two more quotes may belong to the string's content.
                        index += 3
                        while byte(at: index) == quote { index += 1 }
                        return
                    }
                }
                index += 1
            }
        }

        mutating func checkTableHeader() throws(Refusal) {
            var offset = index + 1
            if byte(at: offset) == UInt8(ascii: "[") { offset += 1 }
            while let next = byte(at: offset), next == UInt8(ascii: " ") || next == UInt8(ascii: "\t") {
                offset += 1
            }
            guard let next = byte(at: offset) else { return }
            if !(Self.isBareKeyByte(next) || next == UInt8(ascii: "\"") || next == UInt8(ascii: "'")) {
                throw refusal(at: offset, "a table header must start with a key (a name or a quoted string) after '['")
            }
        }

        mutating func checkDate() throws(Refusal) {
            // YYYY-MM-DD, then T or t, then ':'
            let pattern: [Bool] = [true, true, true, true, false, true, true, false, true, true]
            guard index + 11 < bytes.count, index == 0 || !Self.isDigit(byte(at: index - 1)) else { return }
            for (position, isDigit) in pattern.enumerated() {
                let current = byte(at: index + position)
                if isDigit ? !Self.isDigit(current) : current != UInt8(ascii: "-") { return }
            }
            let separator = byte(at: index + 10)
            guard separator == UInt8(ascii: "T") || separator == UInt8(ascii: "t"), !Self.isDigit(byte(at: index + 11))
            else { return }
            // Without a colon this may still be a bare key (`1979-05-27Tx = 1`), which the parser handles.
            var offset = index + 11
            while let next = byte(at: offset), !Self.endsValue(next) {
                if next == UInt8(ascii: ":") {
                    throw refusal(at: index + 11, "a time must follow the 'T' of a date-time (HH:MM:SS)")
                }
                offset += 1
            }
        }

        static func endsValue(_ byte: UInt8) -> Bool {
            switch byte {
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r"), UInt8(ascii: "\n"), UInt8(ascii: ","),
                UInt8(ascii: "]"), UInt8(ascii: "}"), UInt8(ascii: "#"), UInt8(ascii: "="):
                true
            default:
                false
            }
        }

        mutating func run() throws(Refusal) {
            while index < bytes.count {
                let current = bytes[index]
                switch current {
                case UInt8(ascii: "\n"):
                    newline()
                    index += 1
                case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r"):
                    index += 1
                case UInt8(ascii: "#"):
                    while index < bytes.count && bytes[index] != UInt8(ascii: "\n") { index += 1 }
                case UInt8(ascii: "\""), UInt8(ascii: "'"):
                    atLineStart = false
                    skipString()
                case UInt8(ascii: "["):
                    if open.isEmpty && atLineStart {
                        try checkTableHeader()
                        // The rest of the header line holds keys, not a value.
                        atLineStart = false
                        index += 1
                        while index < bytes.count, bytes[index] == UInt8(ascii: "[") { index += 1 }
                        while index < bytes.count, bytes[index] != UInt8(ascii: "\n"), bytes[index] != UInt8(ascii: "#")
                        {
                            if bytes[index] == UInt8(ascii: "\"") || bytes[index] == UInt8(ascii: "'") {
                                skipString()
                            } else {
                                index += 1
                            }
                        }
                    } else {
                        atLineStart = false
                        open.append(current)
                        index += 1
                    }
                case UInt8(ascii: "{"):
                    atLineStart = false
                    open.append(current)
                    index += 1
                case UInt8(ascii: "}"):
                    if open.last == UInt8(ascii: "[") {
                        throw refusal(at: index, "'}' inside an array, where a value or ']' is expected")
                    }
                    atLineStart = false
                    _ = open.popLast()
                    index += 1
                case UInt8(ascii: "]"):
                    atLineStart = false
                    _ = open.popLast()
                    index += 1
                default:
                    atLineStart = false
                    if Self.isDigit(current) {
                        try checkDate()
                    }
                    index += 1
                }
            }
        }
    }
}
