import SyncIdentifiers

/// The `history` property of a `rev`: ancestor revision IDs, newest first, without the revision
/// itself (spec §4.2).
package struct RevisionHistory: Sendable, Hashable, CustomStringConvertible {
    /// Newest (the parent) first.
    package var ancestors: [RevisionID]

    /// The cap on history length when a `changes`/`proposeChanges` reply gave no `maxHistory`.
    package static let defaultMaximumLength = 50

    package init(_ ancestors: [RevisionID] = []) {
        self.ancestors = ancestors
    }

    /// Parses the comma-separated wire form; spaces around entries are tolerated, an absent or
    /// empty property is an empty history.
    package init(parsing text: String?) throws(ProtocolError) {
        guard let text, !text.isEmpty else {
            ancestors = []
            return
        }
        var ancestors: [RevisionID] = []
        for entry in text.split(separator: ",", omittingEmptySubsequences: false) {
            let trimmed = entry.trimmingSpaces
            guard !trimmed.isEmpty else {
                throw .invalidHistory(text, reason: "it has an empty entry")
            }
            ancestors.append(try RevisionID(received: trimmed))
        }
        self.ancestors = ancestors
    }

    /// The wire form, comma-separated without spaces as LiteCore writes it; empty for no history.
    package var description: String {
        ancestors.map(\.description).joined(separator: ",")
    }

    package var isEmpty: Bool { ancestors.isEmpty }

    /// Checks that the history can hang below `revision`: the first entry is its parent and each
    /// further entry is exactly one generation older. An empty history is valid (unknown ancestry).
    package func validate(below revision: RevisionID) throws(ProtocolError) {
        var expectedGeneration = revision.generation
        for ancestor in ancestors {
            guard expectedGeneration > 1, ancestor.generation == expectedGeneration - 1 else {
                throw .invalidHistory(
                    description,
                    reason: "\(ancestor) should have generation \(Int(expectedGeneration) - 1) "
                        + "to follow \(expectedGeneration == revision.generation ? "the revision \(revision)" : "its predecessor")"
                )
            }
            expectedGeneration = ancestor.generation
        }
    }

    /// The history to send for a revision whose full ancestry (newest first) is `ancestry`: it
    /// stops at, and includes, the first ancestor the receiver already has, and holds at most
    /// `maximumLength` entries (spec §4.2).
    package static func truncated(
        _ ancestry: [RevisionID],
        stoppingAtFirstOf knownByReceiver: Set<RevisionID>,
        maximumLength: Int = defaultMaximumLength
    ) -> RevisionHistory {
        var result: [RevisionID] = []
        for ancestor in ancestry.prefix(max(maximumLength, 0)) {
            result.append(ancestor)
            if knownByReceiver.contains(ancestor) { break }
        }
        return RevisionHistory(result)
    }

    /// Fills generation gaps in a pruned ancestry (newest first) below `revision` with LiteCore-style
    /// `faded000…` placeholders, so that generations descend by exactly one (spec §4.2).
    package static func fillingGaps(
        in ancestry: [RevisionID],
        below revision: RevisionID,
        using generator: inout some RandomNumberGenerator
    ) -> RevisionHistory {
        var result: [RevisionID] = []
        var previousGeneration = revision.generation
        for ancestor in ancestry where ancestor.generation < previousGeneration {
            var missing = previousGeneration - 1
            while missing > ancestor.generation {
                result.append(.fadedPlaceholder(generation: missing, using: &generator))
                missing -= 1
            }
            result.append(ancestor)
            previousGeneration = ancestor.generation
        }
        return RevisionHistory(result)
    }
}

extension Substring {
    var trimmingSpaces: String {
        String(drop(while: { $0 == " " }).reversed().drop(while: { $0 == " " }).reversed())
    }
}
