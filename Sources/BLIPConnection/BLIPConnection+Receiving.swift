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
        } catch .unknownFrameType(let type) {
            // Spec §2.11: frames of the undefined types 3, 6 and 7 are skipped, as LiteCore does ("Unknown BLIP
            // frame type received", BLIPConnection.cc `_onWebSocketMessages`), for forward compatibility. The
            // decoder rejected the header before touching its inflater or checksum, so later frames still decode.
            logger.warning("ignoring BLIP frame of unknown type", metadata: ["blip.frame_type": "\(type)"])
            return true
        } catch {
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
