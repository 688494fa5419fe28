import SyncJSON

/// The properties of one BLIP message: ordered key/value string pairs.
///
/// Kept independent of the BLIP codec so that this module stays transport-free; the pairs convert
/// one-to-one to and from the codec's own property type. Order matters because LiteCore writes
/// `Profile` first and tests compare against recorded traffic.
public struct MessageProperties: Sendable, Hashable, ExpressibleByDictionaryLiteral {
    public private(set) var pairs: [(key: String, value: String)]

    /// The key under which BLIP carries a request's profile (its message type).
    package static let profileKey = "Profile"

    package init() {
        pairs = []
    }

    package init(_ pairs: [(key: String, value: String)]) {
        self.pairs = pairs
    }

    public init(dictionaryLiteral elements: (String, String)...) {
        pairs = elements.map { (key: $0.0, value: $0.1) }
    }

    package var isEmpty: Bool { pairs.isEmpty }

    /// The value of the first pair named `key`, or `nil` when it is absent **or empty**.
    ///
    /// LiteCore writes some properties with an empty value where it means "none" (notably
    /// `setCheckpoint`'s `rev` on a first save, spec §3.0), so an empty value reads as absent.
    package subscript(key: String) -> String? {
        guard let value = pairs.first(where: { $0.key == key })?.value, !value.isEmpty else {
            return nil
        }
        return value
    }

    /// The request's profile, if any.
    package var profile: String? { self[Self.profileKey] }

    /// Appends a pair, keeping the order in which a message is assembled.
    package mutating func append(_ key: String, _ value: String) {
        pairs.append((key: key, value: value))
    }

    /// Appends a pair only when there is a value to write.
    package mutating func append(_ key: String, _ value: String?) {
        if let value {
            append(key, value)
        }
    }

    /// Appends a boolean pair in the given style, or nothing when it is false: LiteCore never
    /// writes a false boolean, it leaves the property out (spec §3.0).
    package mutating func append(_ key: String, _ flag: Bool, style: PropertyBoolean.Style) {
        if flag {
            append(key, style.trueValue)
        }
    }

    public static func == (lhs: MessageProperties, rhs: MessageProperties) -> Bool {
        lhs.pairs.elementsEqual(rhs.pairs) { $0.key == $1.key && $0.value == $1.value }
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(pairs.count)
        for (key, value) in pairs {
            hasher.combine(key)
            hasher.combine(value)
        }
    }
}

extension MessageProperties {
    /// The value of `key`, or a `missingProperty` error naming the message it was expected in.
    package func required(_ key: String, in profile: Profile?) throws(ProtocolError) -> String {
        guard let value = self[key] else {
            throw .missingProperty(key, profile: profile)
        }
        return value
    }

    /// A LiteCore-style boolean (spec §3.0); absent means false.
    package func flag(_ key: String) -> Bool {
        PropertyBoolean.parse(self[key])
    }

    /// A non-negative decimal integer property, or `nil` when absent.
    package func nonNegativeInteger(_ key: String, in profile: Profile?) throws(ProtocolError) -> Int? {
        guard let text = self[key] else { return nil }
        guard let value = Int(text), value >= 0 else {
            throw .invalidProperty(key, value: text, profile: profile, expected: "a non-negative decimal integer")
        }
        return value
    }

    /// The `collection` index of a collection-aware connection (spec §3.0), or `nil` in legacy mode.
    package func collectionIndex(in profile: Profile?) throws(ProtocolError) -> Int? {
        try nonNegativeInteger(CollectionIndex.propertyKey, in: profile)
    }

    /// A JSON-valued property such as `since` or `sequence`.
    package func json(_ key: String, in profile: Profile?) throws(ProtocolError) -> JSONValue? {
        guard let text = self[key] else { return nil }
        do {
            return try JSONValue(parsing: Array(text.utf8))
        } catch {
            throw .invalidProperty(key, value: text, profile: profile, expected: "a JSON value (\(error.reason))")
        }
    }

    /// Checks the `Profile` property of a request before decoding it as `profile`.
    func expectProfile(_ profile: Profile) throws(ProtocolError) {
        guard let actual = self.profile else { return }
        guard actual == profile.rawValue else {
            throw .wrongProfile(expected: profile, actual: actual)
        }
    }
}

/// Where collection-aware messages carry their collection (spec §3.0).
package enum CollectionIndex {
    package static let propertyKey = "collection"
}
