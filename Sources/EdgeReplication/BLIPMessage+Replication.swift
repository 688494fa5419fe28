import BLIPCodec
import ReplicationProtocol

extension ErrorReply {
    /// The same failure as the BLIP connection layer throws it back to the peer.
    var blipError: BLIPErrorReply {
        BLIPErrorReply(domain: domain.rawValue, code: code, message: message ?? "")
    }
}

extension BLIPMessage {
    /// Decodes this request (or reply) as a replication message; a malformed one becomes the error
    /// reply the protocol prescribes for it.
    func decode<Message: ReplicationMessage>(_ type: Message.Type) throws(BLIPErrorReply) -> Message {
        do throws(ProtocolError) {
            return try Message(properties: MessageProperties(properties.pairs), body: body)
        } catch {
            throw error.reply.blipError
        }
    }

    /// A reply to this request carrying `message`, compressed when LiteCore would compress it.
    func reply(with message: some ReplicationMessage) -> BLIPMessage {
        let (properties, body) = message.encode()
        return reply(
            properties: BLIPProperties(properties.pairs),
            body: body,
            isCompressed: BLIPCompressionRule.compressesReply(to: self)
        )
    }

    /// An outgoing request carrying `request`, compressed when LiteCore would compress it.
    static func request(_ request: some ReplicationRequest, isUrgent: Bool = false, isNoReply: Bool = false)
        -> BLIPMessage
    {
        let (properties, body) = request.encode()
        return BLIPMessage(
            kind: .request,
            properties: BLIPProperties(properties.pairs),
            body: body,
            isUrgent: isUrgent,
            isNoReply: isNoReply,
            isCompressed: BLIPCompressionRule.compressesRequest(profile: properties.profile, body: body)
        )
    }
}
