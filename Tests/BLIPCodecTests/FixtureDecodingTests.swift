import BLIPCodec
import Foundation
import Testing

@Suite("Decoding the Couchbase Lite 3.2.4 and 4.0.3 transcripts")
struct FixtureDecodingTests {
    /// Profiles each transcript must contain (see each set's README: scenario notes).
    static let expectedProfiles: [String: Set<String>] = [
        "cbl-3.2.4/push-oneshot.jsonl": ["getCheckpoint", "proposeChanges", "rev", "setCheckpoint"],
        "cbl-3.2.4/pull-oneshot.jsonl": ["getCheckpoint", "subChanges", "changes", "rev", "setCheckpoint"],
        "cbl-3.2.4/pushpull-continuous.jsonl": [
            "getCheckpoint", "proposeChanges", "subChanges", "changes", "rev", "setCheckpoint",
        ],
        "cbl-3.2.4/update-delete.jsonl": ["getCheckpoint", "proposeChanges", "rev", "setCheckpoint"],
        "cbl-3.2.4/blob.jsonl": ["proposeChanges", "rev", "getAttachment", "subChanges", "changes"],
        "cbl-3.2.4/conflict.jsonl": ["proposeChanges", "subChanges", "changes", "rev"],
        "cbl-3.2.4/bulk-500.jsonl": ["getCheckpoint", "proposeChanges", "rev", "setCheckpoint"],
        "cbl-3.2.4/auth-fail.jsonl": ["subChanges", "changes", "rev"],
        "cbl-3.2.4/delta.jsonl": ["proposeChanges", "changes", "rev"],
        "cbl-3.2.4/pull-tombstone.jsonl": ["subChanges", "changes", "rev", "setCheckpoint"],
        "cbl-3.2.4/collections.jsonl": [
            "getCollections", "subChanges", "proposeChanges", "changes", "rev", "setCheckpoint",
        ],
        "cbl-3.2.4/blob-2mb.jsonl": ["proposeChanges", "rev", "getAttachment"],
        // 4.0.3 always starts with getCollections, also for the default collection (WIRE-NOTES §2).
        "cbl-4.0.3/push-oneshot.jsonl": ["getCollections", "proposeChanges", "rev", "setCheckpoint"],
        "cbl-4.0.3/pull-oneshot.jsonl": ["getCollections", "subChanges", "changes", "rev", "setCheckpoint"],
        "cbl-4.0.3/pushpull-continuous.jsonl": [
            "getCollections", "proposeChanges", "subChanges", "changes", "rev", "setCheckpoint",
        ],
        "cbl-4.0.3/update-delete.jsonl": ["getCollections", "proposeChanges", "rev", "setCheckpoint"],
        "cbl-4.0.3/blob.jsonl": ["getCollections", "proposeChanges", "rev", "getAttachment", "subChanges", "changes"],
        "cbl-4.0.3/conflict.jsonl": ["getCollections", "proposeChanges", "subChanges", "changes", "rev"],
        "cbl-4.0.3/collections.jsonl": [
            "getCollections", "subChanges", "proposeChanges", "changes", "rev", "setCheckpoint",
        ],
        "cbl-4.0.3/bulk-500.jsonl": ["getCollections", "proposeChanges", "rev", "setCheckpoint"],
        "cbl-4.0.3/pull-tombstone.jsonl": ["getCollections", "subChanges", "changes", "rev", "setCheckpoint"],
        // The cross-version sessions end at their first refused request (README: scenarios).
        "cbl-4.0.3/v3-client-to-v4-server.jsonl": ["getCheckpoint"],
        "cbl-4.0.3/v3-client-named-collection-to-v4-server.jsonl": [
            "getCollections", "proposeChanges", "rev", "subChanges",
        ],
        "cbl-4.0.3/v4-client-to-v3-server.jsonl": ["getCollections", "subChanges"],
    ]

    @Test("every fixture file is covered")
    func everyFixtureIsCovered() {
        #expect(Set(Fixture.paths) == Set(Self.expectedProfiles.keys))
    }

    @Test(
        "every frame decodes, CRCs match, and messages match the header and the capture tool",
        arguments: Fixture.paths)
    func decodesEveryFrame(path: String) throws {
        let fixture = try FixtureCache.at(path)
        var profiles: Set<String> = []
        var connectionsReplayed = 0
        for connection in fixture.connections where connection["http_status"] as? Int == 101 {
            let conn = try #require(connection["conn"] as? Int)
            let replay = try ConnectionReplay(fixture: fixture, conn: conn)
            connectionsReplayed += 1
            for direction in Fixture.Direction.allCases {
                let result = replay[direction]
                let complete = try #require(connection["messages_complete"] as? [String: Int])
                #expect(
                    result.messages.count == complete[direction.rawValue],
                    "\(path) conn \(conn) \(direction)")
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
        #expect(
            connectionsReplayed == fixture.connections.filter { $0["http_status"] as? Int == 101 }.count)
        #expect(connectionsReplayed > 0)
        let expected = try #require(Self.expectedProfiles[path])
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
            #expect(
                Dictionary(uniqueKeysWithValues: message.properties.pairs.map { ($0.key, $0.value) })
                    == toolProperties)
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
        let json = try JSONSerialization.jsonObject(
            with: Data(message.body), options: [.fragmentsAllowed])
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
