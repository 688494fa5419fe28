import BLIPCodec

extension BLIPConnection {
    /// Decodes one BLIP frame; returns false once the connection has failed or closed.
    func receive(_ bytes: [UInt8]) async -> Bool {
        switch state {
        case .idle, .closed:
            return false
        case .running, .closing:
            // While closing, keep reading so that ACKs and replies still arrive.
            break
        }
        do throws(BLIPProtocolError) {
            try receiveFrame(bytes)
            return true
        } catch {
            // Frames of an undefined type (3, 6 or 7; spec §2.3) are fatal here too. LiteCore logs "Unknown BLIP
            // frame type received" and skips them, for forward compatibility (BLIPConnection.cc,
            // `_onWebSocketMessages`); but a new frame type would come with a new subprotocol (`BLIP_4`) that
            // this side would not negotiate, and neither LiteCore nor go-blip sends one under BLIP_3. So such a
            // frame comes from a broken or hostile peer, which learns at once instead of waiting for a reply
            // until the idle timeout.
            await fail(.protocolViolation(error))
            return false
        }
    }

    private func receiveFrame(_ bytes: [UInt8]) throws(BLIPProtocolError) {
        switch try decoder.decode(bytes) {
        case .ack(let ack):
            outbox.acknowledge(ack)
            wakeWriter()
        case .data(let frame):
            let output = try assembler.receive(frame)
            if let ack = output.ack {
                outbox.enqueue(ack)
                wakeWriter()
            }
            if let message = output.message {
                deliver(message)
            }
        }
    }

    private func deliver(_ message: BLIPMessage) {
        switch message.kind {
        case .request:
            incomingRequests?.yield(message)
        case .reply:
            pendingReplies.removeValue(forKey: message.number)?.receive(.success(message))
        case .error:
            let failure = message.errorReply ?? BLIPErrorReply(domain: "BLIP", code: 0)
            pendingReplies.removeValue(forKey: message.number)?.receive(.failure(failure))
        }
    }
}
