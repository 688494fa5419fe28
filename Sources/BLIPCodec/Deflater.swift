import CZlib

/// zlib could not set up a compression stream (out of memory or invalid parameters).
public struct CompressionSetupError: Error, Sendable, Hashable, CustomStringConvertible {
    package let zlibCode: Int32

    public var description: String { "zlib stream setup failed with code \(zlibCode)" }
}

/// The long-lived raw-deflate compressor of one outgoing direction.
///
/// BLIP shares one deflate stream across all frames and messages of a connection: each frame's data is
/// deflated with a sync flush and the resulting `00 00 FF FF` trailer is dropped before sending.
package final class Deflater {
    /// The bytes that every sync flush ends with and that BLIP leaves off the wire.
    package static let syncFlushTrailer: [UInt8] = [0x00, 0x00, 0xFF, 0xFF]

    /// zlib writes into a temporary buffer of this size, taken for each call and appended from, so no buffer
    /// is zero-filled per frame and none is kept per stream: a listener keeps a deflate and an inflate stream
    /// for every connection that has exchanged documents, and a 64 KiB buffer kept by each was 128 KiB of heap
    /// per connection.
    static let scratchSize = 16 * 1024

    private let stream: UnsafeMutablePointer<z_stream>

    /// Level 6, memLevel 9 and a 32 KiB window (windowBits 15) are LiteCore's settings; with them zlib
    /// reproduces Couchbase Lite's single-frame compressed messages byte for byte. Any raw inflater with a
    /// 32 KiB window, as every BLIP peer's is, reads a stream made with a smaller window.
    package init(level: Int32 = 6, memoryLevel: Int32 = 9, windowBits: Int32 = 15) throws(CompressionSetupError) {
        // zlib keeps a pointer back to the z_stream, so it must not move: allocate it on the heap.
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        let status = CZlib_deflateInit2(stream, level, -windowBits, memoryLevel)
        guard status == Z_OK else {
            stream.deallocate()
            throw CompressionSetupError(zlibCode: status)
        }
    }

    deinit {
        deflateEnd(stream)
        stream.deallocate()
    }

    /// An upper bound for the bytes `compress` appends for `inputLength` bytes of input, for a stream made
    /// with `memoryLevel`.
    ///
    /// Incompressible input becomes stored blocks, 5 bytes of overhead each. A block ends at the latest when
    /// zlib's symbol buffer is full, after 2^(memLevel + 6) literals (16 KiB at memLevel 8, 4 KiB at 6), and
    /// a frame is at most 16 KiB, so the overhead is at most 1 byte per 2 KiB at memLevel 8 and 9, and per
    /// 2^(memLevel + 3) bytes below. The margin also covers a pending bit buffer and the stripped flush block.
    package static func maxCompressedLength(forInputLength inputLength: Int, memoryLevel: Int32) -> Int {
        inputLength + (inputLength >> storedOverheadShift(memoryLevel: memoryLevel)) + 16
    }

    /// Whether `maxCompressedLength` holds for frame-sized input to a stream made with these settings.
    ///
    /// memLevel 6–9 (below 6 the stored blocks are so short that their overhead exceeds the allowance), and
    /// windowBits 15, or 13–14 with a memLevel of at most windowBits − 7. zlib may store an incompressible
    /// block uncompressed only while the block's input is still in its window: 16 KiB of literals (memLevel 8)
    /// can slide out of a 16 KiB window before the block ends and would then be Huffman-coded, larger than
    /// its input, while 8 KiB (memLevel 7) cannot. A frame's 16 KiB always fit a 32 KiB window.
    package static func boundsFrames(memoryLevel: Int32, windowBits: Int32) -> Bool {
        (6...9).contains(memoryLevel) && (13...15).contains(windowBits)
            && (windowBits == 15 || memoryLevel <= windowBits - 7)
    }

    /// log2 of the input bytes per byte of stored-block overhead that `maxCompressedLength` allows.
    static func storedOverheadShift(memoryLevel: Int32) -> Int {
        min(Int(memoryLevel) + 3, 11)
    }

    /// Compresses `input`, sync-flushes, and appends the output without its `00 00 FF FF` trailer.
    package func compress(_ input: UnsafeRawBufferPointer, appendingTo output: inout [UInt8]) {
        let start = output.count
        stream.pointee.next_in = UnsafeMutablePointer(
            mutating: input.baseAddress?.assumingMemoryBound(to: Bytef.self)
        )
        stream.pointee.avail_in = uInt(input.count)
        defer {
            stream.pointee.next_in = nil
            stream.pointee.next_out = nil
        }
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: Self.scratchSize) { scratch in
            while true {
                stream.pointee.next_out = scratch.baseAddress
                stream.pointee.avail_out = uInt(Self.scratchSize)
                let status = deflate(stream, Z_SYNC_FLUSH)
                let count = Self.scratchSize - Int(stream.pointee.avail_out)
                output.append(contentsOf: UnsafeBufferPointer(rebasing: scratch.prefix(count)))
                // With a sync flush, deflate is done once it leaves output space unused.
                if stream.pointee.avail_out != 0 || (status != Z_OK && status != Z_BUF_ERROR) {
                    break
                }
            }
        }
        let trailerLength = Self.syncFlushTrailer.count
        if output.count - start >= trailerLength,
            output[(output.count - trailerLength)...].elementsEqual(Self.syncFlushTrailer)
        {
            output.removeLast(trailerLength)
        }
    }

    package func compress(_ input: ArraySlice<UInt8>, appendingTo output: inout [UInt8]) {
        input.withUnsafeBytes { compress($0, appendingTo: &output) }
    }
}
