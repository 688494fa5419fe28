/// A text, or a generation and digest, that is not a revision ID. The reason is typed so that each layer can word
/// it in its own error: a peer is answered in the replication protocol's words, which peers and RELIABILITY.md
/// already know.
public struct InvalidRevisionID: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Reason: Error, Hashable, Sendable, CustomStringConvertible {
        case missingSeparator
        case generationNotDecimal
        /// The text's generation is `0` or has a leading zero.
        case generationStartsWithZero
        case generationTooLarge
        /// A generation given as a number is 0 (or, for a history, below 1).
        case generationBelowOne
        case emptyDigest
        case digestNotLowercaseHex
        case oddDigestLength
        /// The digest does not fit LiteCore's binary revision ID beside the generation's varint.
        case digestTooLong(maximumBytes: Int)

        public var description: String {
            switch self {
            case .missingSeparator: "expected <generation>-<digest>"
            case .generationNotDecimal: "the generation is not a decimal number"
            case .generationStartsWithZero: "the generation must be at least 1, without leading zeros"
            case .generationTooLarge: "the generation exceeds 2^32-1"
            case .generationBelowOne: "the generation must be at least 1"
            case .emptyDigest: "the digest is empty"
            case .digestNotLowercaseHex: "the digest must be lowercase hexadecimal"
            case .oddDigestLength: "the digest has an odd number of hex digits"
            case .digestTooLong(let maximumBytes): "the digest is longer than \(maximumBytes) bytes"
            }
        }
    }

    /// The text as given, or `<generation>-<digest>` when the ID was given by its parts.
    package let text: String
    package let reason: Reason

    /// Public so that a layer that computes generations itself, such as the store from a `_revisions` start,
    /// reports one out of range as the same error.
    package init(text: String, reason: Reason) {
        self.text = text
        self.reason = reason
    }

    public var description: String { "invalid revision ID '\(text)': \(reason)" }
}
