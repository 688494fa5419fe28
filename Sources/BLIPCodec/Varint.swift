/// BLIP's unsigned LEB128 varints: 7 bits per byte, least significant group first.
package enum Varint {
    /// The longest encoding of a 64-bit value.
    package static let maxLength = 10

    /// Appends the minimal encoding of `value`.
    @inlinable
    package static func append(_ value: UInt64, to bytes: inout [UInt8]) {
        var remaining = value
        while remaining >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: remaining) | 0x80)
            remaining >>= 7
        }
        bytes.append(UInt8(remaining))
    }

    /// The number of bytes `append` writes for `value`.
    @inlinable
    package static func encodedLength(of value: UInt64) -> Int {
        var length = 1
        var remaining = value >> 7
        while remaining != 0 {
            length += 1
            remaining >>= 7
        }
        return length
    }

    /// Reads a varint starting at `index` and advances `index` past it.
    ///
    /// Rejects truncated input, values above `UInt64.max` and non-minimal encodings, so every value has
    /// exactly one accepted spelling.
    @inlinable
    package static func read<Bytes: RandomAccessCollection<UInt8>>(
        from bytes: Bytes,
        at index: inout Bytes.Index
    ) throws(VarintFailure) -> UInt64 {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        var position = index
        while position != bytes.endIndex {
            let byte = bytes[position]
            bytes.formIndex(after: &position)
            let group = UInt64(byte & 0x7F)
            if shift == 63 && group > 1 {
                throw .overflow
            }
            value |= group << shift
            if byte & 0x80 == 0 {
                if group == 0 && shift > 0 {
                    throw .overlong
                }
                index = position
                return value
            }
            shift += 7
            if shift > 63 {
                throw .overflow
            }
        }
        throw .truncated
    }
}
