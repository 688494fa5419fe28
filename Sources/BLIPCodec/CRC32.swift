import CZlib

/// The running CRC-32 (zlib/IEEE) that BLIP keeps per direction over uncompressed frame payloads.
package struct CRC32: Sendable, Hashable {
    /// The current value; `crc32(0, NULL, 0)` is 0.
    package private(set) var value: UInt32 = 0

    package init() {}

    package mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        let updated = CZlib.crc32_z(
            uLong(value),
            base.assumingMemoryBound(to: Bytef.self),
            bytes.count
        )
        value = UInt32(truncatingIfNeeded: updated)
    }

    package mutating func update(_ bytes: ArraySlice<UInt8>) {
        bytes.withUnsafeBytes { update($0) }
    }

    package mutating func update(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { update($0) }
    }
}
