/// A collection of a database, named by scope and collection as in Couchbase Server and Couchbase Lite. The store,
/// the replication protocol and the REST API all hold the same names, so a name checked once holds everywhere.
public struct CollectionName: Hashable, Sendable, CustomStringConvertible {
    /// The name reserved for the default scope and the default collection.
    package static let defaultName = "_default"
    /// The default collection, `_default._default`.
    public static let `default` = CollectionName(unchecked: defaultName, defaultName)

    package let scope: String
    package let name: String

    /// Creates a collection name, validating both parts by Couchbase's rules: 1–251 characters from
    /// `A-Z a-z 0-9 _ - %`, not starting with `_` or `%` (except `_default`, and the `_default` collection
    /// exists only in the `_default` scope).
    package init(scope: String, name: String) throws(InvalidCollectionName) {
        let whole = "\(scope).\(name)"
        // Empty parts come before the other rules, so that such a text is reported as malformed (which the
        // replication protocol refuses) rather than as a name that no one serves.
        guard !scope.isEmpty, !name.isEmpty else {
            throw InvalidCollectionName(text: whole, reason: .emptyPart)
        }
        try Self.validate(scope, whole: whole)
        try Self.validate(name, whole: whole)
        guard name != Self.defaultName || scope == Self.defaultName else {
            throw InvalidCollectionName(text: whole, reason: .defaultCollectionOutsideDefaultScope)
        }
        self.init(unchecked: scope, name)
    }

    /// Parses either textual form: `scope.collection`, or a bare collection name in the default scope
    /// (`"_default"` alone is the default collection).
    package init(parsing text: String) throws(InvalidCollectionName) {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        switch parts.count {
        case 1:
            try self.init(scope: Self.defaultName, name: text)
        case 2:
            try self.init(scope: String(parts[0]), name: String(parts[1]))
        default:
            throw InvalidCollectionName(text: text, reason: .tooManyParts)
        }
    }

    private init(unchecked scope: String, _ name: String) {
        self.scope = scope
        self.name = name
    }

    package var isDefault: Bool { self == .default }

    /// `scope.collection` with the scope always written: the form of the store, the configuration and the command
    /// line, and part of the checkpoint IDs of named collections.
    package var qualifiedName: String { "\(scope).\(name)" }

    /// The form on the wire: LiteCore leaves the default scope out (`orders` is `_default.orders`, `_default` the
    /// default collection), and a peer compares names as text.
    package var wireName: String {
        scope == Self.defaultName ? name : qualifiedName
    }

    /// The qualified name: unambiguous without knowing the default scope's convention.
    public var description: String { qualifiedName }

    private static func validate(_ part: String, whole: String) throws(InvalidCollectionName) {
        let utf8 = part.utf8
        guard utf8.count <= 251 else {
            throw InvalidCollectionName(text: whole, reason: .tooLong)
        }
        guard part == defaultName || (utf8.first != UInt8(ascii: "_") && utf8.first != UInt8(ascii: "%")) else {
            throw InvalidCollectionName(text: whole, reason: .reservedFirstCharacter)
        }
        guard utf8.allSatisfy(isAllowed) else {
            throw InvalidCollectionName(text: whole, reason: .disallowedCharacter)
        }
    }

    private static func isAllowed(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "-"), UInt8(ascii: "%"):
            true
        default:
            false
        }
    }
}
