import CZlib

/// Encodes the data frames of one outgoing direction, with its long-lived deflater and running CRC.
///
/// Frames must be sent in the order they are encoded.
public final class BLIPFrameEncoder {
    private let compressionLevel: Int32
    private let memoryLevel: Int32
    private let windowBits: Int32
    /// Created with the first compressed frame: a deflate stream zeroes tens of KiB when it is set up, and
    /// an idle replication connection (a continuous pull that is caught up) never sends one.
    private var deflater: Deflater?
    private var crc = CRC32()

    /// - Parameters:
    ///   - compressionLevel: zlib level 1–9, or 0 to never compress (as LiteCore's `BLIPCompressionLevel`
    ///     option).
    ///   - memoryLevel, windowBits: zlib's memLevel and log2 of its window (the defaults, level 6, memLevel 9
    ///     and windowBits 15, are LiteCore's); only pairs for which `Deflater.boundsFrames` holds are accepted,
    ///     so that even incompressible chunks fit their frame.
    public init(compressionLevel: Int32 = 6, memoryLevel: Int32 = 9, windowBits: Int32 = 15)
        throws(CompressionSetupError)
    {
        guard (0...9).contains(compressionLevel),
            Deflater.boundsFrames(memoryLevel: memoryLevel, windowBits: windowBits)
        else {
            throw CompressionSetupError(zlibCode: Z_STREAM_ERROR)
        }
        self.compressionLevel = compressionLevel
        self.memoryLevel = memoryLevel
        self.windowBits = windowBits
    }

    /// Whether a deflate stream is set up (for tests and the idle sweep's accounting).
    package var holdsCompressionState: Bool { deflater != nil }

    /// Frees the deflate stream; the next compressed frame starts a fresh one.
    ///
    /// The peer cannot tell. A raw deflate stream is a series of blocks, and every frame ends in a sync flush, so the
    /// peer's inflater stands at a block boundary after each frame: a fresh stream's blocks continue it, none of
    /// them final and none reaching back into data sent before. Only the running CRC spans the whole connection,
    /// and it is kept. What is lost is the window: the next message cannot refer to the last one's bytes, which
    /// after a quiet spell costs a few bytes on the first message and saves a whole stream per idle connection.
    package func releaseCompressionState() {
        deflater = nil
    }

    /// Whether `encodeFrame` honours `compress`.
    package var compresses: Bool { compressionLevel > 0 }

    /// The running CRC-32 of everything encoded so far.
    package var checksum: UInt32 { crc.value }

    /// The bytes of the header of a frame for message `number`.
    package static func headerLength(number: UInt64) -> Int {
        Varint.encodedLength(of: number) + 1
    }

    /// The most message bytes that fit a frame of `frameSize` bytes, compressed or not.
    package func maxChunkLength(frameSize: Int, number: UInt64, compress: Bool) -> Int {
        let room = frameSize - Self.headerLength(number: number) - 4
        guard compress && compresses else { return max(room, 1) }
        // Inverts Deflater.maxCompressedLength, so even incompressible chunks fit the frame.
        return max(room - 16 - (room >> Deflater.storedOverheadShift(memoryLevel: memoryLevel)), 1)
    }

    /// Encodes one data frame carrying `chunk` of a message's bytes.
    ///
    /// `flags` must not contain `compressed`; it is set when `compress` is true and compression is on.
    package func encodeFrame(
        number: UInt64,
        type: BLIPFrameType,
        flags: BLIPFrameFlags,
        chunk: ArraySlice<UInt8>,
        compress: Bool
    ) -> [UInt8] {
        var flags = flags.subtracting(.compressed)
        if compress, compresses, self.deflater == nil {
            // Compression is each frame's own choice, so if zlib cannot get its memory the frame
            // simply goes uncompressed (and the next one tries again).
            self.deflater = try? Deflater(level: compressionLevel, memoryLevel: memoryLevel, windowBits: windowBits)
        }
        let deflater = compress ? self.deflater : nil
        if deflater != nil {
            flags.insert(.compressed)
        }
        var frame: [UInt8] = []
        frame.reserveCapacity(
            Self.headerLength(number: number)
                + Deflater.maxCompressedLength(forInputLength: chunk.count, memoryLevel: memoryLevel) + 4)
        Varint.append(number, to: &frame)
        frame.append(flags.byte(for: type))
        if let deflater {
            deflater.compress(chunk, appendingTo: &frame)
        } else {
            frame.append(contentsOf: chunk)
        }
        crc.update(chunk)
        let checksum = crc.value
        frame.append(UInt8(truncatingIfNeeded: checksum >> 24))
        frame.append(UInt8(truncatingIfNeeded: checksum >> 16))
        frame.append(UInt8(truncatingIfNeeded: checksum >> 8))
        frame.append(UInt8(truncatingIfNeeded: checksum))
        return frame
    }
}
