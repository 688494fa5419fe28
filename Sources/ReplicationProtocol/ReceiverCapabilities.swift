/// What the receiver of revisions announces in its reply to `changes` or `proposeChanges`
/// (spec §3.5): properties `maxHistory`, `blobs`, `deltas`, written in that order.
package struct ReceiverCapabilities: Sendable, Hashable {
    /// Cap on `history` entries in `rev`; `nil` = not stated (use `RevisionHistory.defaultMaximumLength`).
    package var maxHistory: Int?
    /// "I understand blob dicts; don't add `_attachments` stand-ins" (spec §7.2).
    package var blobs: Bool
    /// "You may send me deltas" (spec §6).
    package var deltas: Bool

    package init(maxHistory: Int? = nil, blobs: Bool = false, deltas: Bool = false) {
        self.maxHistory = maxHistory
        self.blobs = blobs
        self.deltas = deltas
    }

    /// What LiteCore announces: `maxHistory: 50`, `blobs: true`, and `deltas: true` only on its
    /// first reply per collection.
    package static func liteCore(includingDeltas deltas: Bool) -> ReceiverCapabilities {
        ReceiverCapabilities(maxHistory: RevisionHistory.defaultMaximumLength, blobs: true, deltas: deltas)
    }

    init(properties: MessageProperties) throws(ProtocolError) {
        maxHistory = try properties.nonNegativeInteger("maxHistory", in: nil)
        blobs = properties.flag("blobs")
        deltas = properties.flag("deltas")
    }

    var properties: MessageProperties {
        var properties = MessageProperties()
        properties.append("maxHistory", maxHistory.map(String.init))
        properties.append("blobs", blobs, style: .literal)
        properties.append("deltas", deltas, style: .literal)
        return properties
    }

    /// The history cap to apply when sending revisions.
    package var effectiveMaxHistory: Int { maxHistory ?? RevisionHistory.defaultMaximumLength }
}
