import BLIPCodec
import Foundation
import Testing

@Suite("Decoding the Couchbase Lite 3.2.4 transcripts")
struct FixtureDecodingTests {
    /// Profiles each transcript must contain (see the fixture README's scenario notes).
    static let expectedProfiles: [String: Set<String>] = [
        "push-oneshot.jsonl": ["getCheckpoint", "proposeChanges", "rev", "setCheckpoint"],
        "pull-oneshot.jsonl": ["getCheckpoint", "subChanges", "changes", "rev", "setCheckpoint"],
        "pushpull-continuous.jsonl": ["getCheckpoint", "proposeChanges", "subChanges", "changes", "rev", "setCheckpoint"],
        "update-delete.jsonl": ["getCheckpoint", "proposeChanges", "rev", "setCheckpoint"],
        "blob.jsonl": ["proposeChanges", "rev", "getAttachment", "subChanges", "changes"],
        "conflict.jsonl": ["proposeChanges", "subChanges", "changes", "rev"],
        "bulk-500.jsonl": ["getCheckpoint", "proposeChanges", "rev", "setCheckpoint"],
        "auth-fail.jsonl": ["subChanges", "changes", "rev"],
        "delta.jsonl": ["proposeChanges", "changes", "rev"],
        "pull-tombstone.jsonl": ["subChanges", "changes", "rev", "setCheckpoint"],
        "collections.jsonl": ["getCollections", "subChanges", "proposeChanges", "changes", "rev", "setCheckpoint"],
        "blob-2mb.jsonl": ["proposeChanges", "rev", "getAttachment"],
    ]

    @Test("every fixture file is covered")
    func everyFixtureIsCovered() {
        #expect(Set(Fixture.fileNames) == Set(Self.expectedProfiles.keys))
    }

    @Test("every frame decodes, CRCs match, and messages match the header and the capture tool", arguments: Fixture.fileNames)
    func decodesEveryFrame(fileName: String) throws {
        let fixture = try FixtureCache.named(fileName)
        var profiles: Set<String> = []
        var connectionsReplayed = 0
        for connection in fixture.connections where connection["http_status"] as? Int == 101 {
            let conn = try #require(connection["conn"] as? Int)
            let replay = try ConnectionReplay(fixture: fixture, conn: conn)
            connectionsReplayed += 1
            for direction in Fixture.Direction.allCases {
                let result = replay[direction]
                let complete = try #require(connection["messages_complete"] as? [String: Int])
                #expect(result.messages.count == complete[direction.rawValue], "\(fileName) conn \(conn) \(direction)")
                let acks = try #require(connection["ack_frames"] as? [String: Int])
                #expect(result.acksReceived.count == acks[direction.rawValue])
                let compressed = try #require(connection["compressed_frames"] as? [String: Int])
                #expect(result.inflatedLengths.count == compressed[direction.rawValue])
                for (frame, length) in result.inflatedLengths {
                    #expect(length == frame.toolDecode["inflated_len"] as? Int, "frame \(frame.index)")
                }
                try checkUncompressedFramesAgainstTool(result)
                // Our assembler ACKs exactly where LiteCore did, with the same byte counts.
                #expect(result.acksGenerated == replay[direction.opposite].acksReceived)
                for message in result.messages {
                    if let profile = message.profile {
                        profiles.insert(profile)
                    }
                    try checkBody(of: message, in: replay, direction: direction)
                }
            }
        }
        #expect(connectionsReplayed == fixture.connections.filter { $0["http_status"] as? Int == 101 }.count)
        #expect(connectionsReplayed > 0)
        let expected = try #require(Self.expectedProfiles[fileName])
        #expect(expected.isSubset(of: profiles), "profiles seen: \(profiles.sorted())")
    }

    /// Cross-checks header fields of every frame, and properties and body of single-frame uncompressed
    /// messages, against the capture tool's decode.
    private func checkUncompressedFramesAgainstTool(_ result: ConnectionReplay.DirectionResult) throws {
        for (frame, decoded) in result.dataFrames {
            #expect(decoded.number == UInt64(try #require(frame.toolDecode["msg_no"] as? Int)))
            let flags = decoded.flags.byte(for: decoded.type)
            #expect(frame.toolDecode["flags"] as? String == String(format: "0x%02x", flags))
            guard !decoded.flags.contains(.compressed), !decoded.flags.contains(.moreComing),
                frame.toolDecode["frame_of_message"] as? Int == 0
            else { continue }
            let message = try BLIPMessage(
                kind: decoded.type == .request ? .request : (decoded.type == .reply ? .reply : .error),
                number: decoded.number,
                flags: decoded.flags,
                decodingPayload: decoded.payload[...]
            )
            let toolProperties = frame.toolDecode["properties"] as? [String: String] ?? [:]
            #expect(Dictionary(uniqueKeysWithValues: message.properties.pairs.map { ($0.key, $0.value) }) == toolProperties)
            if let text = frame.toolDecode["body_text"] as? String {
                #expect(message.body == Array(text.utf8))
            } else if let length = frame.toolDecode["body_binary_len"] as? Int {
                #expect(message.body.count == length)
            } else {
                #expect(message.body.isEmpty)
            }
        }
    }

    /// Every body is JSON except blob data (getAttachment replies) and error messages.
    private func checkBody(
        of message: BLIPMessage,
        in replay: ConnectionReplay,
        direction: Fixture.Direction
    ) throws {
        guard !message.body.isEmpty, message.kind != .error else { return }
        if message.kind == .reply {
            let request = try #require(replay.request(answeredBy: message, travelling: direction))
            guard request.profile != "getAttachment" else { return }
        }
        let json = try JSONSerialization.jsonObject(with: Data(message.body), options: [.fragmentsAllowed])
        switch message.profile {
        case "changes", "proposeChanges":
            let rows = try #require(json as? [Any])
            #expect(rows.allSatisfy { $0 is [Any] })
        case "rev", "setCheckpoint", "getCollections":
            #expect(json is [String: Any])
        default:
            break
        }
    }
}
