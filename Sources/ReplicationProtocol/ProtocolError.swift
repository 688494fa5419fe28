/// A replication message that does not follow the protocol.
///
/// Every case knows the `ERR` reply a peer should answer with (`reply`), so handlers can turn a
/// decoding failure straight into a wire error.
public enum ProtocolError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A required property is absent or empty. `profile` is nil for replies.
    case missingProperty(String, profile: Profile?)
    /// A property has a value that cannot be read as `expected`.
    case invalidProperty(String, value: String, profile: Profile?, expected: String)
    /// A request was decoded as the wrong message type.
    case wrongProfile(expected: Profile, actual: String)
    /// The body is not JSON.
    case invalidJSON(context: String, reason: String)
    /// The body is JSON of the wrong shape.
    case invalidBody(context: String, reason: String)
    /// One row of a `changes`/`proposeChanges` list (or its reply) has the wrong shape.
    case invalidRow(context: String, index: Int, reason: String)
    /// A rev-tree revision ID is malformed (spec §4.1).
    case invalidRevisionID(String, reason: String)
    /// A CBMobile_4 version or version vector is malformed (spec §4.6), or appears where a rev-tree ID must.
    case invalidVersion(String, reason: String)
    /// A `history` list breaks the descending-generation rule (spec §4.2).
    case invalidHistory(String, reason: String)
    /// A document body uses a reserved top-level property (spec §3.7).
    case reservedBodyProperty(String)
    /// A JSON delta cannot be applied to its base (spec §6).
    case corruptDelta(String)
    /// A `proveAttachment` nonce is empty or longer than 255 bytes (spec §3.10).
    case invalidNonce(length: Int)
    /// A blob digest is not `sha1-` + base64 of 20 bytes (spec §7.1).
    case invalidDigest(String)
    /// A collection name in `getCollections` is malformed.
    case invalidCollectionName(String, reason: String)

    /// The `ERR` reply to send when a request fails this way.
    package var reply: ErrorReply {
        switch self {
        case .missingProperty, .invalidProperty, .invalidJSON, .invalidBody, .invalidRow, .invalidRevisionID,
            .invalidVersion, .invalidHistory, .invalidCollectionName, .invalidDigest:
            .http(400, description)
        case .wrongProfile:
            .blip(400, description)
        case .reservedBodyProperty(let key):
            // Sync Gateway answers 404 for the internal properties and 400 for the rest (spec §3.7).
            if ["_id", "_rev", "_deleted", "_revisions", "_sync", "_removed"].contains(key) {
                .http(404, description)
            } else {
                .http(400, description)
            }
        case .corruptDelta:
            // LiteCore maps its delta failures to HTTP/422 so that the sender resends the full body (spec §6).
            .http(422, description)
        case .invalidNonce:
            .blip(400, "Missing nonce")
        }
    }

    public var description: String {
        switch self {
        case .missingProperty(let key, let profile):
            "\(Self.messageName(profile)) is missing the '\(key)' property"
        case .invalidProperty(let key, let value, let profile, let expected):
            "\(Self.messageName(profile)) has an invalid '\(key)' property \"\(value)\": expected \(expected)"
        case .wrongProfile(let expected, let actual):
            "expected a '\(expected.rawValue)' message but got '\(actual)'"
        case .invalidJSON(let context, let reason):
            "\(context) is not valid JSON: \(reason)"
        case .invalidBody(let context, let reason):
            "\(context) is malformed: \(reason)"
        case .invalidRow(let context, let index, let reason):
            "\(context) row \(index) is malformed: \(reason)"
        case .invalidRevisionID(let revID, let reason):
            "invalid revision ID \"\(revID)\": \(reason)"
        case .invalidVersion(let version, let reason):
            "invalid version \"\(version)\": \(reason)"
        case .invalidHistory(let history, let reason):
            "invalid revision history \"\(history)\": \(reason)"
        case .reservedBodyProperty(let key):
            "\(key) is a reserved internal property"
        case .corruptDelta(let reason):
            "the delta cannot be applied: \(reason)"
        case .invalidNonce(let length):
            "proveAttachment nonce must be 1 to 255 bytes long, got \(length)"
        case .invalidDigest(let digest):
            "invalid blob digest \"\(digest)\": expected 'sha1-' followed by base64 of 20 bytes"
        case .invalidCollectionName(let name, let reason):
            "invalid collection name \"\(name)\": \(reason)"
        }
    }

    private static func messageName(_ profile: Profile?) -> String {
        profile.map { "'\($0.rawValue)' message" } ?? "reply"
    }
}
