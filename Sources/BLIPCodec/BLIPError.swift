/// Why a BLIP varint could not be read.
public enum VarintFailure: Error, Sendable, Hashable {
    /// The input ended before a byte without the continuation bit.
    case truncated
    /// The value needs more than 64 bits.
    case overflow
    /// The encoding has redundant trailing zero groups (e.g. `80 00` for 0).
    case overlong
}

/// A violation of the BLIP 3 protocol by the peer, or a limit that its input exceeded.
///
/// Every case names the exact problem so that a connection can log it and close with a precise reason.
public enum BLIPProtocolError: Error, Sendable, Hashable {
    /// A varint in `field` could not be decoded.
    case badVarint(field: String, VarintFailure)
    /// A WebSocket message carried no bytes at all.
    case emptyFrame
    /// A frame ended before its header, checksum or ACK byte count was complete.
    case truncatedFrame(length: Int)
    /// The frame flags varint used bits beyond the 8-bit range that BLIP 3 defines.
    case invalidFlags(UInt64)
    /// A frame's type field held an undefined value (3, 6 or 7).
    ///
    /// The decoder leaves its CRC and inflater untouched, so a receiver may skip the frame, as LiteCore does.
    case unknownFrameType(UInt8)
    /// An ACK frame had bytes after its byte count.
    case trailingBytesInAck(count: Int)
    /// A frame was larger than the receiver accepts.
    case frameTooLarge(size: Int, limit: Int)
    /// Inflating one frame would produce more than the receiver accepts.
    case inflatedFrameTooLarge(limit: Int)
    /// The running CRC-32 did not match the frame's trailer.
    case checksumMismatch(expected: UInt32, actual: UInt32)
    /// zlib rejected the compressed data of a frame.
    case inflateFailed(code: Int32, reason: String)
    /// A message grew beyond the receiver's size limit.
    case messageTooLarge(size: Int, limit: Int)
    /// A new request number was not the successor of the previous one.
    case outOfOrderRequest(number: UInt64, expected: UInt64)
    /// A reply arrived for a request that is not awaiting one.
    case unexpectedReply(number: UInt64)
    /// A message's properties block was malformed.
    case malformedProperties(String)
    /// A compressed frame arrived but compression is disabled on this connection.
    case compressionNotSupported
}

extension BLIPProtocolError: CustomStringConvertible {
    public var description: String {
        switch self {
        case .badVarint(let field, let failure):
            switch failure {
            case .truncated: "truncated varint in \(field)"
            case .overflow: "varint in \(field) overflows 64 bits"
            case .overlong: "overlong (non-minimal) varint in \(field)"
            }
        case .emptyFrame:
            "empty BLIP frame"
        case .truncatedFrame(let length):
            "truncated BLIP frame (\(length) bytes)"
        case .invalidFlags(let flags):
            "invalid frame flags 0x\(String(flags, radix: 16))"
        case .unknownFrameType(let type):
            "unknown BLIP frame type \(type)"
        case .trailingBytesInAck(let count):
            "\(count) unexpected bytes after an ACK's byte count"
        case .frameTooLarge(let size, let limit):
            "frame of \(size) bytes exceeds the limit of \(limit)"
        case .inflatedFrameTooLarge(let limit):
            "frame inflates to more than \(limit) bytes"
        case .checksumMismatch(let expected, let actual):
            "CRC-32 mismatch: frame says \(hex(expected)), computed \(hex(actual))"
        case .inflateFailed(let code, let reason):
            "inflate failed (zlib \(code)): \(reason)"
        case .messageTooLarge(let size, let limit):
            "message of at least \(size) bytes exceeds the limit of \(limit)"
        case .outOfOrderRequest(let number, let expected):
            "request #\(number) out of order, expected #\(expected)"
        case .unexpectedReply(let number):
            "reply #\(number) does not match any request awaiting a reply"
        case .malformedProperties(let reason):
            "malformed properties: \(reason)"
        case .compressionNotSupported:
            "compressed frame received, but compression is disabled"
        }
    }
}

private func hex(_ value: UInt32) -> String {
    let digits = String(value, radix: 16)
    return "0x" + String(repeating: "0", count: 8 - digits.count) + digits
}
