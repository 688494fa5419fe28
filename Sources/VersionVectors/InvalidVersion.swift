import SyncIdentifiers

/// A text that is not a version or a version vector, with the reason in the words a peer is answered with.
public struct InvalidVersion: Error, Hashable, Sendable, CustomStringConvertible {
    package enum Reason: Error, Hashable, Sendable, CustomStringConvertible {
        case missingSeparator
        case timestampNotHex
        case timestampTooLong
        case timestampZero
        case sourceLength(Int)
        case sourceNotBase64
        case emptyVector
        /// Merge versions come in twos or more: one alone merges nothing.
        case loneMergeVersion
        /// Each source appears once in a vector.
        case repeatedSource(SourceID)
        /// A rev-tree revision ID among the versions of a history, where only the oldest entries may be legacy.
        case legacyRevisionBeforeVersion
        case invalidLegacyRevision(InvalidRevisionID.Reason)
        /// The current version is older than a version it claims to supersede; a hybrid logical clock stamps a
        /// version after everything its writer had seen.
        case currentOlderThan(Version)

        package var description: String {
            switch self {
            case .missingSeparator: "expected <hex timestamp>@<source ID>"
            case .timestampNotHex: "the timestamp is not hexadecimal"
            case .timestampTooLong: "the timestamp has more than 16 hex digits"
            case .timestampZero: "the timestamp is zero"
            case .sourceLength(let length): "the source ID has \(length) characters, expected 22 of base64"
            case .sourceNotBase64: "the source ID is not 16 bytes of base64"
            case .emptyVector: "the vector is empty"
            case .loneMergeVersion: "a single merge version (merge versions come in twos or more)"
            case .repeatedSource(let source): "source \(source) appears more than once"
            case .legacyRevisionBeforeVersion: "a rev-tree revision ID comes before a version"
            case .invalidLegacyRevision(let reason): "an invalid rev-tree revision ID in the history: \(reason)"
            case .currentOlderThan(let version):
                "the current version is older than \(version), which it claims to supersede"
            }
        }
    }

    package let text: String
    package let reason: Reason

    package init(text: String, reason: Reason) {
        self.text = text
        self.reason = reason
    }

    public var description: String { "invalid version '\(text)': \(reason)" }
}
