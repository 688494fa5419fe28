/// Whether a message is a request, a reply or an error reply.
public enum BLIPMessageKind: Sendable, Hashable {
    case request
    case reply
    case error

    /// The frame type that carries this kind of message.
    package var frameType: BLIPFrameType {
        switch self {
        case .request: .request
        case .reply: .reply
        case .error: .error
        }
    }

    init?(frameType: BLIPFrameType) {
        switch frameType {
        case .request: self = .request
        case .reply: self = .reply
        case .error: self = .error
        case .ackRequest, .ackReply: return nil
        }
    }
}

/// A complete BLIP message: properties and body.
public struct BLIPMessage: Sendable, Hashable {
    public var kind: BLIPMessageKind
    /// For requests, the sender's request number; for replies, the number of the request they answer.
    /// The sender assigns request numbers, so an outgoing request's number is ignored.
    public var number: UInt64
    public var properties: BLIPProperties
    public var body: [UInt8]
    package var isUrgent: Bool
    /// Only meaningful for requests.
    package var isNoReply: Bool
    /// Whether the sender deflates this message's frames (see `BLIPCompressionRule`).
    public var isCompressed: Bool

    public init(
        kind: BLIPMessageKind = .request,
        number: UInt64 = 0,
        properties: BLIPProperties = [:],
        body: [UInt8] = [],
        isUrgent: Bool = false,
        isNoReply: Bool = false,
        isCompressed: Bool = false
    ) {
        self.kind = kind
        self.number = number
        self.properties = properties
        self.body = body
        self.isUrgent = isUrgent
        self.isNoReply = isNoReply
        self.isCompressed = isCompressed
    }

    /// A request with the given profile.
    public static func request(
        profile: String,
        properties: BLIPProperties = [:],
        body: [UInt8] = [],
        isUrgent: Bool = false,
        isNoReply: Bool = false,
        isCompressed: Bool = false
    ) -> BLIPMessage {
        var allProperties = BLIPProperties([(key: "Profile", value: profile)])
        for (key, value) in properties.pairs where key != "Profile" {
            allProperties[key] = value
        }
        return BLIPMessage(
            kind: .request,
            properties: allProperties,
            body: body,
            isUrgent: isUrgent,
            isNoReply: isNoReply,
            isCompressed: isCompressed
        )
    }

    /// The `Profile` property that names a request's type.
    public var profile: String? { properties["Profile"] }

    /// A reply to this request; like LiteCore's, it copies the request's urgency.
    public func reply(
        properties: BLIPProperties = [:],
        body: [UInt8] = [],
        isCompressed: Bool = false
    ) -> BLIPMessage {
        BLIPMessage(
            kind: .reply,
            number: number,
            properties: properties,
            body: body,
            isUrgent: isUrgent,
            isCompressed: isCompressed
        )
    }

    /// The flags of this message's frames, except `moreComing` and `compressed`, which vary per frame.
    var frameFlags: BLIPFrameFlags {
        var flags: BLIPFrameFlags = []
        if isUrgent { flags.insert(.urgent) }
        if isNoReply && kind == .request { flags.insert(.noReply) }
        return flags
    }
}
