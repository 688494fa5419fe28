import SyncIdentifiers

/// The bytes of a version or vector text, which the parsers read in place.
///
/// Versions and vectors are ASCII, so they are parsed byte by byte: a `Substring`'s `firstIndex(of:)`, `split` and
/// `index(after:)` walk grapheme clusters, about 150 instructions a character, and a stored vector was read back
/// for every document served (47,000 instructions a document, callgrind, `scripts/perf/instructions`).
typealias VersionTextBytes = Slice<UnsafeBufferPointer<UInt8>>

extension VersionTextBytes {
    /// Without the spaces that may follow and precede the delimiters.
    var trimmingSpaces: VersionTextBytes {
        guard let first = firstIndex(where: { $0 != UInt8(ascii: " ") }),
            let last = lastIndex(where: { $0 != UInt8(ascii: " ") })
        else { return self[endIndex...] }
        return self[first...last]
    }

    /// The parts before and after the first `separator`; the second is nil when there is none.
    func splitOnce(at separator: UInt8) -> (VersionTextBytes, VersionTextBytes?) {
        guard let index = firstIndex(of: separator) else { return (self, nil) }
        return (self[..<index], self[(index + 1)...])
    }
}

/// Runs `parse` on the UTF-8 bytes of `text`, keeping its typed error.
func scanning<Value>(
    _ text: Substring, _ parse: (VersionTextBytes) throws(InvalidVersion.Reason) -> Value
) throws(InvalidVersion.Reason) -> Value {
    // A native string or substring hands over its own storage; only a bridged one is copied.
    var contiguous = text
    return try contiguous.withUTF8 { bytes in
        Result { () throws(InvalidVersion.Reason) in try parse(bytes[...]) }
    }.get()
}
