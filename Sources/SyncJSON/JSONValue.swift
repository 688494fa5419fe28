/// A JSON value that keeps object keys in their original order and numbers as written.
///
/// Replication bodies are relayed, stored and diffed; keeping key order and number spelling lets a
/// body that is parsed and re-serialized come out byte for byte as it went in (compact input).
public enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case number(JSONNumber)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)

    package static func integer(_ value: Int) -> JSONValue {
        .number(JSONNumber(value))
    }

    package var objectValue: JSONObject? {
        if case .object(let object) = self { object } else { nil }
    }

    package var arrayValue: [JSONValue]? {
        if case .array(let array) = self { array } else { nil }
    }

    package var stringValue: String? {
        if case .string(let string) = self { string } else { nil }
    }

    package var numberValue: JSONNumber? {
        if case .number(let number) = self { number } else { nil }
    }

    package var boolValue: Bool? {
        if case .bool(let bool) = self { bool } else { nil }
    }

    package var isNull: Bool {
        if case .null = self { true } else { false }
    }

    /// The value as an integer, if it is a JSON number written as one.
    package var intValue: Int? {
        numberValue?.intValue
    }

    /// A short name of the value's type, for error messages.
    package var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}

extension JSONValue: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral
{
    public init(nilLiteral: ()) { self = .null }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int) { self = .number(JSONNumber(value)) }
    public init(floatLiteral value: Double) { self = .number(JSONNumber(value)) }
    public init(stringLiteral value: String) { self = .string(value) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        var object = JSONObject()
        for (key, value) in elements {
            object[key] = value
        }
        self = .object(object)
    }
}

/// A JSON number kept as its literal text, so that sequences and timestamps round-trip exactly
/// (an `Int64`-sized sequence or `1795314761.0` would not survive a trip through `Double`).
/// Equality is textual: `1` and `1.0` differ, as they would on the wire.
public struct JSONNumber: Sendable, Hashable, CustomStringConvertible {
    package let text: String

    /// Accepts only the JSON number grammar (RFC 8259 §6).
    package init?(text: String) {
        guard Self.isValidLiteral(Array(text.utf8)) else { return nil }
        self.text = text
    }

    init(validatedText: String) {
        text = validatedText
    }

    package init<Integer: BinaryInteger>(_ value: Integer) {
        text = String(value)
    }

    /// A finite double; non-finite values have no JSON form and become `0`.
    package init(_ value: Double) {
        text = value.isFinite ? "\(value)" : "0"
    }

    package var intValue: Int? { Int(text) }
    package var int64Value: Int64? { Int64(text) }
    package var doubleValue: Double { Double(text) ?? 0 }
    public var description: String { text }

    static func isValidLiteral(_ bytes: [UInt8]) -> Bool {
        var index = 0
        return JSONScanner.scanNumber(bytes, &index) && index == bytes.count
    }
}

/// A JSON object whose members keep their insertion order. Keys are unique.
///
/// Equality ignores member order, as JSON does: two objects are equal when they have the same
/// members. Serialization uses the stored order.
public struct JSONObject: Sendable, Hashable, Sequence, ExpressibleByDictionaryLiteral {
    package private(set) var keys: [String] = []
    private var values: [JSONValue] = []
    private var positions: [String: Int] = [:]

    package init() {}

    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        for (key, value) in elements {
            self[key] = value
        }
    }

    package var count: Int { keys.count }
    package var isEmpty: Bool { keys.isEmpty }

    /// Reading returns the member's value; assigning a value replaces it in place or appends a new
    /// member, assigning `nil` removes it.
    package subscript(key: String) -> JSONValue? {
        get { positions[key].map { values[$0] } }
        set {
            switch (positions[key], newValue) {
            case (let position?, let value?):
                values[position] = value
            case (let position?, nil):
                keys.remove(at: position)
                values.remove(at: position)
                positions[key] = nil
                for index in position..<keys.count {
                    positions[keys[index]] = index
                }
            case (nil, let value?):
                positions[key] = keys.count
                keys.append(key)
                values.append(value)
            case (nil, nil):
                break
            }
        }
    }

    public func makeIterator() -> some IteratorProtocol<(key: String, value: JSONValue)> {
        zip(keys, values).lazy.map { (key: $0.0, value: $0.1) }.makeIterator()
    }

    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        lhs.count == rhs.count && zip(lhs.keys, lhs.values).allSatisfy { rhs[$0.0] == $0.1 }
    }

    /// Order-independent, to agree with `==`.
    public func hash(into hasher: inout Hasher) {
        var combined = 0
        for (key, value) in zip(keys, values) {
            var memberHasher = Hasher()
            memberHasher.combine(key)
            memberHasher.combine(value)
            combined ^= memberHasher.finalize()
        }
        hasher.combine(count)
        hasher.combine(combined)
    }
}
