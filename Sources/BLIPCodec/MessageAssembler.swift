/// Reassembles the incoming direction's data frames into messages and decides when to ACK.
///
/// Requests and replies are separate number spaces (spec §2.4): new request numbers must arrive in
/// sequence, and replies must answer a request registered with `expectReply(to:)`.
public struct MessageAssembler: Sendable {
    /// LiteCore ACKs after this many bytes of one message since its previous ACK (spec §2.9).
    public static let defaultAckThreshold = 50_000
    public static let defaultMaxMessageSize = 64 << 20

    /// What one frame produced.
    public struct Output: Sendable, Hashable {
        /// The message the frame completed, if any.
        public var message: BLIPMessage?
        /// The ACK to send for the frame's message, if its unacknowledged bytes reached the threshold.
        public var ack: BLIPAckFrame?
    }

    private struct PartialMessage: Sendable {
        var kind: BLIPMessageKind
        var flags: BLIPFrameFlags
        var payload: [UInt8] = []
        var bytesReceived = 0
        var bytesSinceAck = 0
    }

    package let maxMessageSize: Int
    package let ackThreshold: Int
    private var lastRequestNumber: UInt64 = 0
    private var partialRequests: [UInt64: PartialMessage] = [:]
    private var partialReplies: [UInt64: PartialMessage] = [:]
    private var repliesAwaited: Set<UInt64> = []

    public init(
        maxMessageSize: Int = MessageAssembler.defaultMaxMessageSize,
        ackThreshold: Int = MessageAssembler.defaultAckThreshold
    ) {
        self.maxMessageSize = maxMessageSize
        self.ackThreshold = ackThreshold
    }

    /// Registers one of our requests as awaiting a reply; call it before the request's first frame is sent.
    package mutating func expectReply(to number: UInt64) {
        repliesAwaited.insert(number)
    }

    /// The number of our requests whose reply has not completely arrived.
    package var pendingReplyCount: Int { repliesAwaited.count + partialReplies.count }

    /// The bytes held for partially received messages.
    package var bufferedBytes: Int {
        partialRequests.values.reduce(0) { $0 + $1.payload.count }
            + partialReplies.values.reduce(0) { $0 + $1.payload.count }
    }

    public mutating func receive(_ frame: BLIPDataFrame) throws(BLIPProtocolError) -> Output {
        guard let kind = BLIPMessageKind(frameType: frame.type) else {
            throw .unknownFrameType(frame.type.rawValue)
        }
        var partial: PartialMessage
        if kind == .request {
            if let existing = partialRequests.removeValue(forKey: frame.number) {
                partial = existing
            } else {
                guard frame.number == lastRequestNumber &+ 1 else {
                    throw .outOfOrderRequest(number: frame.number, expected: lastRequestNumber &+ 1)
                }
                lastRequestNumber = frame.number
                partial = PartialMessage(kind: kind, flags: frame.flags)
            }
        } else {
            if let existing = partialReplies.removeValue(forKey: frame.number) {
                partial = existing
            } else {
                guard repliesAwaited.remove(frame.number) != nil else {
                    throw .unexpectedReply(number: frame.number)
                }
                partial = PartialMessage(kind: kind, flags: frame.flags)
            }
        }

        let size = partial.payload.count + frame.payload.count
        guard size <= maxMessageSize else {
            throw .messageTooLarge(size: size, limit: maxMessageSize)
        }

        guard frame.flags.contains(.moreComing) else {
            let payload: [UInt8]
            if partial.payload.isEmpty {
                payload = frame.payload
            } else {
                partial.payload.append(contentsOf: frame.payload)
                payload = partial.payload
            }
            let message = try BLIPMessage(
                kind: partial.kind,
                number: frame.number,
                flags: partial.flags,
                decodingPayload: payload[...]
            )
            return Output(message: message, ack: nil)
        }

        partial.payload.append(contentsOf: frame.payload)
        partial.bytesReceived += frame.flowControlLength
        partial.bytesSinceAck += frame.flowControlLength
        var ack: BLIPAckFrame?
        if partial.bytesSinceAck >= ackThreshold {
            partial.bytesSinceAck = 0
            ack = BLIPAckFrame(
                number: frame.number,
                type: frame.type.acknowledgingType,
                byteCount: UInt64(partial.bytesReceived)
            )
        }
        if kind == .request {
            partialRequests[frame.number] = partial
        } else {
            partialReplies[frame.number] = partial
        }
        return Output(message: nil, ack: ack)
    }
}
