import BLIPCodec

/// Decodes one captured connection the way a receiver on each side would: one frame decoder (long-lived
/// inflater, running CRC) and one message assembler per direction.
struct ConnectionReplay {
    struct DirectionResult {
        var messages: [BLIPMessage] = []
        /// ACK frames that travelled in this direction.
        var acksReceived: [BLIPAckFrame] = []
        /// ACKs our assembler asked to send back for this direction's frames.
        var acksGenerated: [BLIPAckFrame] = []
        /// (fixture frame, inflated length) for every compressed frame.
        var inflatedLengths: [(frame: Fixture.Frame, length: Int)] = []
        /// Decoded data frames paired with their fixture frames.
        var dataFrames: [(frame: Fixture.Frame, decoded: BLIPDataFrame)] = []
    }

    private(set) var results: [Fixture.Direction: DirectionResult] = [:]

    init(fixture: Fixture, conn: Int) throws {
        var decoders: [Fixture.Direction: BLIPFrameDecoder] = [:]
        var assemblers: [Fixture.Direction: MessageAssembler] = [:]
        for direction in Fixture.Direction.allCases {
            decoders[direction] = BLIPFrameDecoder()
            assemblers[direction] = MessageAssembler()
            results[direction] = DirectionResult()
        }
        for frame in fixture.binaryFrames(conn: conn) {
            let direction = frame.direction
            switch try decoders[direction]!.decode(frame.payload) {
            case .ack(let ack):
                results[direction]!.acksReceived.append(ack)
            case .data(let data):
                results[direction]!.dataFrames.append((frame, data))
                if data.flags.contains(.compressed) {
                    results[direction]!.inflatedLengths.append((frame, data.payload.count))
                }
                let output = try assemblers[direction]!.receive(data)
                if let ack = output.ack {
                    results[direction]!.acksGenerated.append(ack)
                }
                if let message = output.message {
                    results[direction]!.messages.append(message)
                    if message.kind == .request && !message.isNoReply {
                        assemblers[direction.opposite]!.expectReply(to: message.number)
                    }
                }
            }
        }
    }

    subscript(direction: Fixture.Direction) -> DirectionResult {
        results[direction]!
    }

    /// The request in `direction` that a reply travelling the other way answers.
    func request(answeredBy reply: BLIPMessage, travelling direction: Fixture.Direction)
        -> BLIPMessage?
    {
        self[direction.opposite].messages.first { $0.kind == .request && $0.number == reply.number }
    }
}
