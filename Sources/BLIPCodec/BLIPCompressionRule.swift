/// Which messages Couchbase Lite deflates, so that a peer speaking to it looks like LiteCore on the wire.
///
/// Derived from the CBL 3.2.4 fixtures (spec §2.7): LiteCore compresses `rev` requests and non-empty
/// `changes`/`proposeChanges` requests, every reply to `changes`/`proposeChanges` (even a bare `[]`),
/// and `getAttachment` replies when the request asked for `compress: true`. The caught-up `changes` /
/// `proposeChanges` requests with body `[]`, empty `rev` replies, checkpoint, `subChanges`,
/// `getCollections` and `getAttachment` requests, and error replies all go uncompressed. Compression is
/// a per-frame choice, so peers must accept either way; this only mirrors LiteCore's choices.
package enum BLIPCompressionRule {
    private static let batchProfiles: Set<String> = ["changes", "proposeChanges"]

    /// Whether LiteCore would compress this outgoing request.
    package static func compressesRequest(profile: String?, body: [UInt8]) -> Bool {
        switch profile {
        case "rev"?:
            true
        case let profile? where batchProfiles.contains(profile):
            body != Array("[]".utf8)
        default:
            false
        }
    }

    /// Whether LiteCore would compress a (non-error) reply to `request`.
    package static func compressesReply(to request: BLIPMessage) -> Bool {
        switch request.profile {
        case let profile? where batchProfiles.contains(profile):
            true
        case "getAttachment"?:
            request.properties["compress"] == "true"
        default:
            false
        }
    }
}
