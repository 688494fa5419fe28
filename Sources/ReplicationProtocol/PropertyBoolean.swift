/// Boolean property values as Couchbase Lite reads and writes them (spec §3.0).
package enum PropertyBoolean {
    /// How a true value is written. LiteCore writes string-literal flags as `true` and C++
    /// bools/ints (`noconflicts`, `deleted`, `sendReplacementRevs`) as `1`; a false value is never
    /// written, the property is left out.
    package enum Style: Sendable {
        /// `true`: `continuous`, `activeOnly`, `revocations`, `compress`, `blobs`, `deltas`, `conflictIncludesRev`.
        case literal
        /// `1`: `deleted`, `noconflicts`, `sendReplacementRevs`.
        case integer

        package var trueValue: String {
            switch self {
            case .literal: "true"
            case .integer: "1"
            }
        }
    }

    /// Reads a boolean the liberal LiteCore way: `true`/`YES` and `false`/`NO` in any case, otherwise
    /// a decimal integer that is true when non-zero. Absent and unparsable values are false, which
    /// is what LiteCore's integer fallback yields for them.
    package static func parse(_ value: String?) -> Bool {
        guard let value, !value.isEmpty else { return false }
        switch value.lowercased() {
        case "true", "yes": return true
        case "false", "no": return false
        default: return (Int(value) ?? 0) != 0
        }
    }
}
