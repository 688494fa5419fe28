/// A keyspace inside a database: `scope.collection`, Couchbase style.
public struct CollectionName: Hashable, Sendable, CustomStringConvertible {
    /// The name reserved for the default scope and the default collection.
    public static let defaultName = "_default"
    /// The default collection, `_default._default`.
    public static let `default` = CollectionName(unchecked: defaultName, defaultName)

    public let scope: String
    public let name: String

    /// Creates a collection name, validating both parts by Couchbase Server's rules:
    /// 1–251 characters from `A-Z a-z 0-9 _ - %`, not starting with `_` or `%` (except `_default`).
    public init(scope: String, name: String) throws(StoreError) {
        try Self.validate(scope, whole: "\(scope).\(name)")
        try Self.validate(name, whole: "\(scope).\(name)")
        self.scope = scope
        self.name = name
    }

    /// Parses the form used by `getCollections`: `scope.collection`, or a bare collection name in the
    /// default scope (`"_default"` alone is the default collection).
    public init(parsing text: String) throws(StoreError) {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        switch parts.count {
        case 1:
            try self.init(scope: Self.defaultName, name: text)
        case 2:
            try self.init(scope: String(parts[0]), name: String(parts[1]))
        default:
            throw .invalidCollectionName(text, reason: "expected 'scope.collection' or 'collection'")
        }
    }

    private init(unchecked scope: String, _ name: String) {
        self.scope = scope
        self.name = name
    }

    public var isDefault: Bool { self == .default }

    public var description: String { "\(scope).\(name)" }

    private static func validate(_ part: String, whole: String) throws(StoreError) {
        let utf8 = part.utf8
        guard !utf8.isEmpty else {
            throw .invalidCollectionName(whole, reason: "scope and collection names must not be empty")
        }
        guard utf8.count <= 251 else {
            throw .invalidCollectionName(whole, reason: "names are limited to 251 characters")
        }
        guard part == defaultName || (utf8.first != UInt8(ascii: "_") && utf8.first != UInt8(ascii: "%")) else {
            throw .invalidCollectionName(whole, reason: "names must not start with '_' or '%' (except '_default')")
        }
        for byte in utf8 where !isAllowed(byte) {
            throw .invalidCollectionName(whole, reason: "only letters, digits, '_', '-' and '%' are allowed")
        }
    }

    private static func isAllowed(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "-"), UInt8(ascii: "%"):
            return true
        default:
            return false
        }
    }
}
