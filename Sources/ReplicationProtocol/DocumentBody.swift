import SyncJSON

/// Rules for the top-level special (`_`-prefixed) properties of revision bodies (spec §3.7, §4.4).
package enum DocumentBody {
    /// Properties a pushed body must not carry; Sync Gateway rejects them.
    static let reservedProperties: Set<String> = ["_id", "_rev", "_deleted", "_revisions", "_removed", "_purged"]
    static let syncPropertyPrefix = "_sync"
    /// The CBMobile_2 channel-removal marker.
    package static let removedKey = "_removed"

    /// Rejects a body pushed to us that uses a reserved property: `_id`, `_rev`, `_deleted`,
    /// `_revisions`, `_removed`, `_purged` or anything starting with `_sync`.
    package static func validatePushed(_ body: JSONObject) throws(ProtocolError) {
        for key in body.keys where reservedProperties.contains(key) || key.hasPrefix(syncPropertyPrefix) {
            throw .reservedBodyProperty(key)
        }
    }

    /// The body as stored: every top-level `_` property removed except `_attachments` (whose
    /// stand-ins `BlobReference.strippingStandIns(from:)` handles), as LiteCore does.
    package static func strippingSpecialProperties(_ body: JSONObject) -> JSONObject {
        var result = body
        for key in body.keys where key.hasPrefix("_") && key != BlobReference.attachmentsKey {
            result[key] = nil
        }
        return result
    }

    /// Whether any top-level property starts with `_`. Without one, the stripping above changes nothing and
    /// a received body can be stored as the bytes it came in, instead of being serialised again.
    package static func hasSpecialProperties(_ body: JSONObject) -> Bool {
        body.keys.contains { $0.hasPrefix("_") }
    }

    /// Whether a pulled body is Sync Gateway's CBMobile_2 "removed from your channels" marker
    /// (`"_removed": true`); the puller purges the document instead of storing it.
    package static func isChannelRemoval(_ body: JSONObject) -> Bool {
        body[removedKey] == .bool(true)
    }
}
