/// Unpadded base64url (RFC 4648 §5): URL-safe without escaping, and the shortest text form of a digest.
package enum Base64URL {
    private static let alphabet = Array(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    package static func encode(_ bytes: [UInt8]) -> String {
        var output: [UInt8] = []
        output.reserveCapacity((bytes.count * 4 + 2) / 3)
        var index = 0
        while index < bytes.count {
            let remaining = bytes.count - index
            let chunk =
                UInt32(bytes[index]) << 16
                | (remaining > 1 ? UInt32(bytes[index + 1]) << 8 : 0)
                | (remaining > 2 ? UInt32(bytes[index + 2]) : 0)
            let characters = min(remaining, 3) + 1
            for position in 0..<characters {
                output.append(Self.alphabet[Int((chunk >> (18 - 6 * UInt32(position))) & 0x3F)])
            }
            index += 3
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// Decodes unpadded base64url; `nil` for padding, other alphabets, a length of 1 mod 4, or non-zero
    /// trailing bits (which would let two strings denote the same digest).
    static func decode(_ text: String) -> [UInt8]? {
        let characters = Array(text.utf8)
        guard characters.count % 4 != 1 else { return nil }
        var values: [UInt32] = []
        values.reserveCapacity(characters.count)
        for character in characters {
            guard let value = Self.alphabet.firstIndex(of: character) else { return nil }
            values.append(UInt32(value))
        }
        var bytes: [UInt8] = []
        var index = 0
        while index < values.count {
            let group = values[index..<min(index + 4, values.count)]
            var chunk: UInt32 = 0
            for (position, value) in group.enumerated() {
                chunk |= value << (18 - 6 * UInt32(position))
            }
            let byteCount = group.count - 1
            for position in 0..<byteCount {
                bytes.append(UInt8((chunk >> (16 - 8 * UInt32(position))) & 0xFF))
            }
            let unusedBits = 24 - 8 * UInt32(byteCount)
            guard chunk & ((1 << unusedBits) - 1) == 0 else { return nil }
            index += 4
        }
        return bytes
    }
}
