import BLIPCodec

extension BLIPConnection {
    enum FrameReceipt {
        /// The connection has failed or closed: stop reading.
        case closed
        /// The frame was taken in; `request` is the request it completed, for a handler.
        case received(request: BLIPMessage?)
    }

    /// Decodes one BLIP frame.
    func receive(_ bytes: [UInt8]) async -> FrameReceipt {
        switch state {
        case .idle, .closed:
            return .closed
        case .running, .closing:
            // While closing, keep reading so that ACKs and replies still arrive.
            break
        }
        do throws(BLIPProtocolError) {
            return .received(request: try receiveFrame(bytes))
        } catch .unknownFrameType(let type) {
            // Spec §2.11: frames of the undefined types 3, 6 and 7 are skipped, as LiteCore does ("Unknown BLIP
            // frame type received", BLIPConnection.cc `_onWebSocketMessages`), for forward compatibility. The
            // decoder rejected the header before touching its inflater or checksum, so later frames still decode.
            logger.warning("ignoring BLIP frame of unknown type", metadata: ["blip.frame_type": "\(type)"])
            return .received(request: nil)
        } catch {
            await fail(.protocolViolation(error))
            return .closed
        }
    }

    /// Takes in one frame; returns the request it completed.
    private func receiveFrame(_ bytes: [UInt8]) throws(BLIPProtocolError) -> BLIPMessage? {
        switch try decoder.decode(bytes) {
        case .ack(let ack):
            outbox.acknowledge(ack)
            wakeWriter()
            return nil
        case .data(let frame):
            let output = try assembler.receive(frame)
            if let ack = output.ack {
                outbox.enqueue(ack)
                wakeWriter()
            }
            guard let message = output.message else { return nil }
            return deliver(message)
        }
    }

    /// Hands a reply to its waiter; returns a request, for a handler.
    private func deliver(_ message: BLIPMessage) -> BLIPMessage? {
        switch message.kind {
        case .request:
            return message
        case .reply:
            pendingReplies.removeValue(forKey: message.number)?.receive(.success(message))
        case .error:
            let failure = message.errorReply ?? BLIPErrorReply(domain: "BLIP", code: 0)
            pendingReplies.removeValue(forKey: message.number)?.receive(.failure(failure))
        }
        return nil
    }
}
