/// An outgoing message that cannot be encoded.
public enum BLIPEncodingError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Property strings are NUL-terminated on the wire, so they cannot contain NUL.
    case propertyContainsNUL(key: String)
    /// The encoded properties exceed what LiteCore accepts.
    case propertiesTooLarge(size: Int, limit: Int)
    /// The message exceeds the sender's size limit.
    case messageTooLarge(size: Int, limit: Int)

    public var description: String {
        switch self {
        case .propertyContainsNUL(let key):
            "property \"\(key)\" contains a NUL character"
        case .propertiesTooLarge(let size, let limit):
            "properties of \(size) bytes exceed the limit of \(limit)"
        case .messageTooLarge(let size, let limit):
            "message of \(size) bytes exceeds the limit of \(limit)"
        }
    }
}

extension BLIPMessage {
    /// The message bytes before framing: `varint(P) ‖ properties (P bytes) ‖ body`.
    package func encodedPayload() throws(BLIPEncodingError) -> [UInt8] {
        let block = properties.encoded
        // Each key and value ends with a NUL, so any other NUL is inside one of them. Counted in the block, not
        // looked for in each string: through `String.UTF8View` that cost about 330 instructions a string.
        let terminators = block.withUnsafeBufferPointer { bytes in bytes.reduce(0) { $1 == 0 ? $0 + 1 : $0 } }
        if terminators != 2 * properties.pairs.count,
            let (key, _) = properties.pairs.first(where: { $0.key.utf8.contains(0) || $0.value.utf8.contains(0) })
        {
            throw .propertyContainsNUL(key: key)
        }
        guard block.count <= BLIPProperties.maxEncodedLength else {
            throw .propertiesTooLarge(size: block.count, limit: BLIPProperties.maxEncodedLength)
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Varint.maxLength + block.count + body.count)
        Varint.append(UInt64(block.count), to: &bytes)
        bytes.append(contentsOf: block)
        bytes.append(contentsOf: body)
        return bytes
    }

    /// Splits assembled message bytes into properties and body.
    public init(
        kind: BLIPMessageKind,
        number: UInt64,
        flags: BLIPFrameFlags,
        decodingPayload payload: ArraySlice<UInt8>
    ) throws(BLIPProtocolError) {
        var index = payload.startIndex
        let length: UInt64
        do {
            length = try Varint.read(from: payload, at: &index)
        } catch {
            throw .badVarint(field: "properties length", error)
        }
        guard length <= UInt64(payload.endIndex - index) else {
            throw .malformedProperties(
                "length \(length) exceeds the \(payload.endIndex - index) bytes of the message"
            )
        }
        let propertiesEnd = index + Int(length)
        self.init(
            kind: kind,
            number: number,
            properties: try BLIPProperties(decoding: payload[index..<propertiesEnd]),
            body: Array(payload[propertiesEnd...]),
            isUrgent: flags.contains(.urgent),
            isNoReply: flags.contains(.noReply),
            isCompressed: flags.contains(.compressed)
        )
    }
}
