import BLIPCodec
import Testing

@Suite("Re-encoding the transcripts")
struct FixtureReencodingTests {
    @Test(
        "uncompressed frames and ACKs are reproduced byte for byte, CRC chained through compressed frames",
        arguments: Fixture.paths)
    func reproducesFrames(path: String) throws {
        let fixture = try FixtureCache.at(path)
        for connection in fixture.connections where connection["http_status"] as? Int == 101 {
            let conn = try #require(connection["conn"] as? Int)
            for direction in Fixture.Direction.allCases {
                let decoder = BLIPFrameDecoder()
                let encoder = try BLIPFrameEncoder()
                let checker = BLIPFrameDecoder()
                for frame in fixture.binaryFrames(conn: conn, direction: direction) {
                    switch try decoder.decode(frame.payload) {
                    case .ack(let ack):
                        #expect(ack.encoded == frame.payload)
                    case .data(let data):
                        let compressed = data.flags.contains(.compressed)
                        let encoded = encoder.encodeFrame(
                            number: data.number,
                            type: data.type,
                            flags: data.flags,
                            chunk: data.payload[...],
                            compress: compressed
                        )
                        if compressed {
                            #expect(encoded.prefix(2) == frame.payload.prefix(2))
                            #expect(encoded.suffix(4) == frame.payload.suffix(4))
                        } else {
                            #expect(encoded == frame.payload, "frame \(frame.index)")
                        }
                        // Our compressed output decodes with a long-lived inflater of its own.
                        guard case .data(let checked) = try checker.decode(encoded) else {
                            Issue.record("re-encoded frame \(frame.index) is not a data frame")
                            continue
                        }
                        #expect(
                            checked.payload == data.payload && checked.flags == data.flags
                                && checked.number == data.number)
                    }
                }
            }
        }
    }

    /// Spec §2.7: level 6, memLevel 9, one sync flush per frame and one stream per direction reproduces
    /// every compressed frame of the 500-document push.
    @Test("bulk-500: every compressed frame from the client is reproduced byte for byte")
    func bulkPushCompressesLikeLiteCore() throws {
        let fixture = try FixtureCache.named("bulk-500.jsonl")
        let decoder = BLIPFrameDecoder()
        let encoder = try BLIPFrameEncoder()
        var compressedFrames = 0
        for frame in fixture.binaryFrames(conn: 0, direction: .activeToPassive) {
            guard case .data(let data) = try decoder.decode(frame.payload) else { continue }
            let encoded = encoder.encodeFrame(
                number: data.number,
                type: data.type,
                flags: data.flags,
                chunk: data.payload[...],
                compress: data.flags.contains(.compressed)
            )
            #expect(encoded == frame.payload, "frame \(frame.index)")
            if data.flags.contains(.compressed) {
                compressedFrames += 1
            }
        }
        #expect(compressedFrames == 503)
    }

    @Test("LiteCore's compression choices match the rule", arguments: Fixture.paths)
    func compressionRule(path: String) throws {
        let fixture = try FixtureCache.at(path)
        for connection in fixture.connections where connection["http_status"] as? Int == 101 {
            let replay = try ConnectionReplay(
                fixture: fixture, conn: try #require(connection["conn"] as? Int))
            for direction in Fixture.Direction.allCases {
                for message in replay[direction].messages {
                    switch message.kind {
                    case .request:
                        #expect(
                            message.isCompressed
                                == BLIPCompressionRule.compressesRequest(
                                    profile: message.profile, body: message.body),
                            "\(message.profile ?? "") \(message.properties)"
                        )
                    case .reply:
                        let request = try #require(replay.request(answeredBy: message, travelling: direction))
                        #expect(message.isCompressed == BLIPCompressionRule.compressesReply(to: request))
                        #expect(message.isUrgent == request.isUrgent)
                    case .error:
                        #expect(!message.isCompressed)
                    }
                }
            }
        }
    }
}
