/// What the receiver of revisions announces in its reply to `changes` or `proposeChanges`
/// (spec §3.5): properties `maxHistory`, `blobs`, `deltas`, written in that order.
package struct ReceiverCapabilities: Sendable, Hashable {
    /// Cap on `history` entries in `rev`; `nil` = not stated (use `RevisionHistory.defaultMaximumLength`).
    package var maxHistory: Int?
    /// "I understand blob dicts; don't add `_attachments` stand-ins" (spec §7.2).
    package var blobs: Bool
    /// "You may send me deltas" (spec §6).
    package var deltas: Bool
    /// "Send the current revision in place of a requested one that is gone" (`sendReplacementRevs`), which
    /// LiteCore 4 puts in every reply of a version-vector database.
    package var takesReplacements: Bool

    package init(maxHistory: Int? = nil, blobs: Bool = false, deltas: Bool = false, takesReplacements: Bool = false) {
        self.maxHistory = maxHistory
        self.blobs = blobs
        self.deltas = deltas
        self.takesReplacements = takesReplacements
    }

    /// What LiteCore announces: `blobs: true`, and `deltas: true` only on its first reply per collection; with rev
    /// trees `maxHistory: 50` before them, with version vectors (which have no history to cap)
    /// `sendReplacementRevs: 1` after them (the 4.0.3 fixtures, WIRE-NOTES §5).
    package static func liteCore(includingDeltas deltas: Bool, versionVectors: Bool = false) -> ReceiverCapabilities {
        versionVectors
            ? ReceiverCapabilities(blobs: true, deltas: deltas, takesReplacements: true)
            : ReceiverCapabilities(maxHistory: RevisionHistory.defaultMaximumLength, blobs: true, deltas: deltas)
    }

    init(properties: MessageProperties) throws(ProtocolError) {
        maxHistory = try properties.nonNegativeInteger("maxHistory", in: nil)
        blobs = properties.flag("blobs")
        deltas = properties.flag("deltas")
        takesReplacements = properties.flag("sendReplacementRevs")
    }

    var properties: MessageProperties {
        var properties = MessageProperties()
        properties.append("maxHistory", maxHistory.map(String.init))
        properties.append("blobs", blobs, style: .literal)
        properties.append("deltas", deltas, style: .literal)
        properties.append("sendReplacementRevs", takesReplacements, style: .integer)
        return properties
    }

    /// The history cap to apply when sending revisions.
    package var effectiveMaxHistory: Int { maxHistory ?? RevisionHistory.defaultMaximumLength }
}
