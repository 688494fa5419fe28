/// A collection as `getCollections` names it (spec §3.1): `scope.collection`, with the scope left
/// out for the default scope; `_default` alone is the default collection.
public struct CollectionName: Sendable, Hashable, CustomStringConvertible {
    public static let defaultName = "_default"
    public static let `default` = CollectionName(uncheckedScope: defaultName, name: defaultName)

    public let scope: String
    public let name: String

    public init(scope: String = CollectionName.defaultName, name: String) throws(ProtocolError) {
        for part in [scope, name] {
            guard !part.isEmpty else {
                throw .invalidCollectionName("\(scope).\(name)", reason: "scope and collection names must not be empty")
            }
            guard !part.contains(".") else {
                throw .invalidCollectionName("\(scope).\(name)", reason: "'\(part)' contains a '.'")
            }
        }
        self.init(uncheckedScope: scope, name: name)
    }

    private init(uncheckedScope scope: String, name: String) {
        self.scope = scope
        self.name = name
    }

    /// Parses the wire form: `coll` is `_default.coll`, `scope.coll` names both.
    public init(parsing text: String) throws(ProtocolError) {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        switch parts.count {
        case 1: try self.init(name: text)
        case 2: try self.init(scope: String(parts[0]), name: String(parts[1]))
        default: throw .invalidCollectionName(text, reason: "expected 'collection' or 'scope.collection'")
        }
    }

    public var isDefault: Bool { self == .default }

    /// The wire form, with the default scope left out as LiteCore writes it.
    public var description: String {
        scope == Self.defaultName ? name : "\(scope).\(name)"
    }
}
