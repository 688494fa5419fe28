import CZlib

/// Why a PNG could not be encoded.
package enum PNGEncodingError: Error, Equatable, Sendable {
    /// Width or height is zero, or the pixel count does not match them.
    case invalidDimensions(width: Int, height: Int, pixelCount: Int)
    /// zlib's `compress2` failed with this status.
    case compressionFailed(status: Int32)
}

extension PNGEncodingError: CustomStringConvertible {
    package var description: String {
        switch self {
        case .invalidDimensions(let width, let height, let pixelCount):
            return "cannot encode a \(width)×\(height) PNG from \(pixelCount) pixels"
        case .compressionFailed(let status):
            return "zlib could not compress the PNG image data (status \(status))"
        }
    }
}

/// A minimal PNG writer for 8-bit grayscale images: signature, IHDR, one IDAT, IEND (ISO/IEC 15948).
package enum PNGEncoder {
    private static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    /// Encodes row-major gray levels (0 black … 255 white).
    package static func grayscale(width: Int, height: Int, pixels: [UInt8]) throws(PNGEncodingError)
        -> [UInt8]
    {
        guard width > 0, height > 0, width <= Int(Int32.max), height <= Int(Int32.max),
            pixels.count == width * height
        else {
            throw .invalidDimensions(width: width, height: height, pixelCount: pixels.count)
        }
        var header: [UInt8] = []
        Self.appendBigEndian(UInt32(width), to: &header)
        Self.appendBigEndian(UInt32(height), to: &header)
        // Bit depth 8, colour type 0 (grayscale), deflate, adaptive filtering, no interlace.
        header += [8, 0, 0, 0, 0]

        // Every scanline starts with its filter type; 0 (none) is best for two-tone images anyway.
        var scanlines: [UInt8] = []
        scanlines.reserveCapacity((width + 1) * height)
        for row in 0..<height {
            scanlines.append(0)
            scanlines += pixels[(row * width)..<((row + 1) * width)]
        }
        var compressedLength = compressBound(uLong(scanlines.count))
        var compressed = [UInt8](repeating: 0, count: Int(compressedLength))
        let status = compress2(
            &compressed, &compressedLength, scanlines, uLong(scanlines.count), Z_BEST_COMPRESSION)
        guard status == Z_OK else { throw .compressionFailed(status: status) }
        compressed.removeSubrange(Int(compressedLength)...)

        var png = Self.signature
        Self.appendChunk("IHDR", header, to: &png)
        Self.appendChunk("IDAT", compressed, to: &png)
        Self.appendChunk("IEND", [], to: &png)
        return png
    }

    private static func appendChunk(_ type: String, _ data: [UInt8], to png: inout [UInt8]) {
        let typeBytes = Array(type.utf8)
        Self.appendBigEndian(UInt32(data.count), to: &png)
        png += typeBytes
        png += data
        // The CRC covers the type and the data, not the length.
        var crc = crc32(0, typeBytes, uInt(typeBytes.count))
        crc = data.withUnsafeBufferPointer { crc32(crc, $0.baseAddress, uInt($0.count)) }
        Self.appendBigEndian(UInt32(truncatingIfNeeded: crc), to: &png)
    }

    private static func appendBigEndian(_ value: UInt32, to bytes: inout [UInt8]) {
        bytes += [
            UInt8(value >> 24), UInt8((value >> 16) & 0xFF), UInt8((value >> 8) & 0xFF),
            UInt8(value & 0xFF),
        ]
    }
}
