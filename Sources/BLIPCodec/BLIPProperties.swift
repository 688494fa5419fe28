/// A message's properties: ordered key/value string pairs.
///
/// BLIP 3 has no token abbreviations (spec §2.5): LiteCore and go-blip write every key and value as a
/// plain UTF-8 C string, so none are expanded or produced here. Order is kept as sent because LiteCore
/// puts `Profile` first and the fixtures are reproduced byte for byte.
public struct BLIPProperties: Sendable, Hashable, ExpressibleByDictionaryLiteral {
    /// LiteCore refuses larger property blocks (spec §2.5).
    package static let maxEncodedLength = 100 * 1024

    public private(set) var pairs: [(key: String, value: String)]

    public init() {
        pairs = []
    }

    public init(_ pairs: [(key: String, value: String)]) {
        self.pairs = pairs
    }

    public init(dictionaryLiteral elements: (String, String)...) {
        pairs = elements.map { (key: $0.0, value: $0.1) }
    }

    public var isEmpty: Bool { pairs.isEmpty }

    /// The value of the first pair named `key`; setting replaces it in place or appends a new pair.
    public subscript(key: String) -> String? {
        get { pairs.first { $0.key == key }?.value }
        set {
            let index = pairs.firstIndex { $0.key == key }
            switch (index, newValue) {
            case (let index?, let value?): pairs[index].value = value
            case (let index?, nil): pairs.remove(at: index)
            case (nil, let value?): pairs.append((key: key, value: value))
            case (nil, nil): break
            }
        }
    }

    /// The NUL-separated encoding, without its length prefix.
    package var encoded: [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(pairs.reduce(0) { $0 + $1.key.utf8.count + $1.value.utf8.count + 2 })
        for (key, value) in pairs {
            bytes.append(contentsOf: key.utf8)
            bytes.append(0)
            bytes.append(contentsOf: value.utf8)
            bytes.append(0)
        }
        return bytes
    }

    /// Parses a properties block (without its length prefix).
    public init(decoding block: ArraySlice<UInt8>) throws(BLIPProtocolError) {
        pairs = []
        guard !block.isEmpty else { return }
        guard block.last == 0 else {
            throw .malformedProperties("block does not end with NUL")
        }
        var strings: [String] = []
        var start = block.startIndex
        // Property strings are almost always ASCII, which needs no UTF-8 validation.
        var unionOfBytes: UInt8 = 0
        for index in block.indices {
            let byte = block[index]
            guard byte == 0 else {
                unionOfBytes |= byte
                continue
            }
            let field = block[start..<index]
            if unionOfBytes < 0x80 {
                strings.append(String(decoding: field, as: UTF8.self))
            } else if let string = String(validating: field, as: UTF8.self) {
                strings.append(string)
            } else {
                throw .malformedProperties(
                    "string at offset \(start - block.startIndex) is not valid UTF-8")
            }
            start = index + 1
            unionOfBytes = 0
        }
        guard strings.count.isMultiple(of: 2) else {
            throw .malformedProperties("key \"\(strings.last!)\" has no value")
        }
        pairs.reserveCapacity(strings.count / 2)
        for index in stride(from: 0, to: strings.count, by: 2) {
            pairs.append((key: strings[index], value: strings[index + 1]))
        }
    }

    public static func == (lhs: BLIPProperties, rhs: BLIPProperties) -> Bool {
        lhs.pairs.elementsEqual(rhs.pairs) { $0.key == $1.key && $0.value == $1.value }
    }

    public func hash(into hasher: inout Hasher) {
        for (key, value) in pairs {
            hasher.combine(key)
            hasher.combine(value)
        }
    }
}

extension BLIPProperties: CustomStringConvertible {
    public var description: String {
        "{" + pairs.map { "\($0.key): \($0.value)" }.joined(separator: ", ") + "}"
    }
}
