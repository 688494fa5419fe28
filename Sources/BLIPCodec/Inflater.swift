import CZlib

/// The long-lived raw-deflate decompressor of one incoming direction.
///
/// It is never reset: compressed frames refer back into earlier frames and messages of the connection.
package final class Inflater {
    private let stream: UnsafeMutablePointer<z_stream>

    package init() throws(CompressionSetupError) {
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        let status = CZlib_inflateInit2(stream, -15)
        guard status == Z_OK else {
            stream.deallocate()
            throw CompressionSetupError(zlibCode: status)
        }
    }

    deinit {
        inflateEnd(stream)
        stream.deallocate()
    }

    /// Inflates one frame's payload (restoring the `00 00 FF FF` sync-flush trailer) and appends the output.
    ///
    /// Throws once the frame's output would exceed `limit` bytes, so a small "deflate bomb" frame cannot
    /// make the receiver allocate without bound.
    package func inflate(
        _ payload: UnsafeRawBufferPointer,
        appendingTo output: inout [UInt8],
        limit: Int
    ) throws(BLIPProtocolError) {
        var produced = 0
        try run(input: payload, output: &output, produced: &produced, limit: limit)
        var failure: BLIPProtocolError?
        Deflater.syncFlushTrailer.withUnsafeBytes { trailer in
            do throws(BLIPProtocolError) {
                try run(input: trailer, output: &output, produced: &produced, limit: limit)
            } catch {
                failure = error
            }
        }
        if let failure {
            throw failure
        }
    }

    package func inflate(
        _ payload: ArraySlice<UInt8>,
        appendingTo output: inout [UInt8],
        limit: Int
    ) throws(BLIPProtocolError) {
        var failure: BLIPProtocolError?
        payload.withUnsafeBytes { buffer in
            do throws(BLIPProtocolError) {
                try inflate(buffer, appendingTo: &output, limit: limit)
            } catch {
                failure = error
            }
        }
        if let failure {
            throw failure
        }
    }

    private func run(
        input: UnsafeRawBufferPointer,
        output: inout [UInt8],
        produced: inout Int,
        limit: Int
    ) throws(BLIPProtocolError) {
        guard let base = input.baseAddress, !input.isEmpty else { return }
        stream.pointee.next_in = UnsafeMutablePointer(
            mutating: base.assumingMemoryBound(to: Bytef.self))
        stream.pointee.avail_in = uInt(input.count)
        defer {
            stream.pointee.next_in = nil
            stream.pointee.next_out = nil
        }
        // As in `Deflater.compress`: a buffer per call, none kept per connection.
        try withUnsafeTemporaryAllocation(of: UInt8.self, capacity: Deflater.scratchSize) {
            (scratch) throws(BLIPProtocolError) in
            try drain(into: scratch, output: &output, produced: &produced, limit: limit)
        }
    }

    private func drain(
        into scratch: UnsafeMutableBufferPointer<UInt8>,
        output: inout [UInt8],
        produced: inout Int,
        limit: Int
    ) throws(BLIPProtocolError) {
        while true {
            stream.pointee.next_out = scratch.baseAddress
            stream.pointee.avail_out = uInt(scratch.count)
            let status = CZlib.inflate(stream, Z_SYNC_FLUSH)
            let count = scratch.count - Int(stream.pointee.avail_out)
            produced += count
            if produced > limit {
                throw .inflatedFrameTooLarge(limit: limit)
            }
            output.append(contentsOf: UnsafeBufferPointer(rebasing: scratch.prefix(count)))
            switch status {
            case Z_OK, Z_BUF_ERROR:
                // Done once all input is consumed and zlib left output space unused.
                if stream.pointee.avail_in == 0 && stream.pointee.avail_out != 0 {
                    return
                }
                if status == Z_BUF_ERROR && stream.pointee.avail_out != 0 {
                    throw .inflateFailed(code: status, reason: "no progress possible")
                }
            case Z_STREAM_END:
                // BLIP's streams last as long as the connection; a final block would strand later frames.
                throw .inflateFailed(code: status, reason: "peer ended its deflate stream")
            default:
                let reason = stream.pointee.msg.map { String(cString: $0) } ?? "zlib error"
                throw .inflateFailed(code: status, reason: reason)
            }
        }
    }
}
