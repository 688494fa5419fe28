/// The type field (low three bits) of a BLIP frame's flags.
public enum BLIPFrameType: UInt8, Sendable, Hashable, CustomStringConvertible {
    /// A request.
    case request = 0
    /// A reply to a request.
    case reply = 1
    /// An error reply to a request.
    case error = 2
    /// Acknowledges bytes received of one of the peer's requests.
    case ackRequest = 4
    /// Acknowledges bytes received of one of the peer's replies (or error replies).
    case ackReply = 5

    /// True for ACK frames, which carry a byte count instead of message data.
    package var isAck: Bool { self == .ackRequest || self == .ackReply }

    /// True for replies and error replies, which share a number space.
    package var isReply: Bool { self == .reply || self == .error }

    /// The ACK type that acknowledges a message of this type.
    package var acknowledgingType: BLIPFrameType {
        self == .request ? .ackRequest : .ackReply
    }

    public var description: String {
        switch self {
        case .request: "MSG"
        case .reply: "RPY"
        case .error: "ERR"
        case .ackRequest: "ACKMSG"
        case .ackReply: "ACKRPY"
        }
    }
}

/// The flag bits of a BLIP frame, above its type field.
public struct BLIPFrameFlags: OptionSet, Sendable, Hashable {
    public let rawValue: UInt8

    public init(rawValue: UInt8) {
        self.rawValue = rawValue & ~Self.typeMask
    }

    /// The frame's payload is raw deflate output of the direction's compressor.
    package static let compressed = BLIPFrameFlags(rawValue: 0x08)
    /// Scheduling hint: send this message's frames before normal ones.
    package static let urgent = BLIPFrameFlags(rawValue: 0x10)
    /// A request that must not be answered.
    package static let noReply = BLIPFrameFlags(rawValue: 0x20)
    /// More frames of this message follow.
    package static let moreComing = BLIPFrameFlags(rawValue: 0x40)

    /// The bits that hold the frame type.
    package static let typeMask: UInt8 = 0x07

    /// The flags byte of a frame of `type` with these flags set.
    package func byte(for type: BLIPFrameType) -> UInt8 {
        rawValue | type.rawValue
    }
}
