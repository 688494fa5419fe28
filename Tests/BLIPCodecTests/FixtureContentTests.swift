import BLIPCodec
import Foundation
import Testing

/// Scenario-specific facts from the fixture README, checked against our own decoding of the raw bytes.
@Suite("Content of the Couchbase Lite 3.2.4 transcripts")
struct FixtureContentTests {
    private func json(_ message: BLIPMessage) throws -> Any {
        try JSONSerialization.jsonObject(with: Data(message.body), options: [.fragmentsAllowed])
    }

    @Test("push-oneshot: getCheckpoint 404, proposeChanges, three revs, setCheckpoint")
    func pushOneShot() throws {
        let replay = try ConnectionReplay(
            fixture: try FixtureCache.named("push-oneshot.jsonl"), conn: 0)
        let active = replay[.activeToPassive].messages
        let passive = replay[.passiveToActive].messages

        #expect(
            active.map(\.profile) == [
                "getCheckpoint", "proposeChanges", "rev", "rev", "rev", "setCheckpoint",
            ])
        #expect(active.map(\.number) == [1, 2, 3, 4, 5, 6])
        let getCheckpoint = active[0]
        #expect(getCheckpoint.properties.pairs.map(\.key) == ["Profile", "client"])
        #expect(getCheckpoint.properties["client"]?.hasPrefix("cp-") == true)

        let notFound = try #require(passive.first { $0.number == 1 })
        #expect(notFound.kind == .error)
        #expect(notFound.errorReply == BLIPErrorReply(domain: "HTTP", code: 404))
        #expect(notFound.properties.pairs.map(\.key) == ["Error-Domain", "Error-Code"])

        let proposeChanges = active[1]
        #expect(proposeChanges.isUrgent && proposeChanges.isCompressed)
        #expect(proposeChanges.properties["conflictIncludesRev"] == "true")
        let rows = try #require(try json(proposeChanges) as? [[Any]])
        #expect(rows.count == 3)
        #expect(rows.map { $0[0] as? String } == ["doc-0", "doc-1", "doc-2"])
        #expect(rows.allSatisfy { $0.count == 4 && $0[2] as? String == "" })

        let proposeReply = try #require(passive.first { $0.number == 2 })
        #expect(proposeReply.kind == .reply && proposeReply.isUrgent && proposeReply.isCompressed)
        #expect(proposeReply.properties["maxHistory"] == "50")
        #expect(proposeReply.properties["deltas"] == "true")
        #expect(proposeReply.body == Array("[]".utf8))

        for rev in active[2...4] {
            #expect(rev.properties["noconflicts"] == "1")
            let body = try #require(try json(rev) as? [String: Any])
            #expect(body["type"] != nil)
        }
        let emptyReplies = passive.filter { (3...5).contains($0.number) }
        #expect(
            emptyReplies.count == 3
                && emptyReplies.allSatisfy { $0.body.isEmpty && $0.properties.isEmpty })

        let setCheckpoint = active[5]
        #expect(setCheckpoint.properties["rev"] == "")
        let checkpoint = try #require(try json(setCheckpoint) as? [String: Any])
        #expect(checkpoint["local"] as? Int == 3)
        #expect(passive.first { $0.number == 6 }?.properties["rev"] == "1-cc")
    }

    @Test("pull-tombstone: the tombstone's deleted flag is the integer 1")
    func pullTombstone() throws {
        let replay = try ConnectionReplay(
            fixture: try FixtureCache.named("pull-tombstone.jsonl"), conn: 1)
        let changes = try #require(replay[.passiveToActive].messages.first { $0.profile == "changes" })
        let rows = try #require(try json(changes) as? [[Any]])
        #expect(rows.count == 5)
        #expect(rows.map { $0[3] as? Int } == [0, 0, 0, 0, 1])
        let tombstoneRev = try #require(
            replay[.passiveToActive].messages.first { $0.properties["deleted"] == "1" })
        #expect(
            tombstoneRev.properties.pairs.map(\.key) == [
                "Profile", "id", "rev", "sequence", "deleted", "history",
            ])
        #expect(tombstoneRev.body == Array("{}".utf8))
    }

    @Test("delta: a 12 729-byte frame inflates to a 20 211-byte rev; later revs carry deltaSrc")
    func delta() throws {
        let fixture = try FixtureCache.named("delta.jsonl")
        let first = try ConnectionReplay(fixture: fixture, conn: 0)
        let bigRev = try #require(
            first[.activeToPassive].dataFrames.first { $0.frame.payload.count == 12_729 })
        #expect(bigRev.decoded.payload.count == 20_211)

        for conn in [2, 3] {
            let replay = try ConnectionReplay(fixture: fixture, conn: conn)
            let deltas = (replay[.activeToPassive].messages + replay[.passiveToActive].messages)
                .filter { $0.profile == "rev" && $0.properties["deltaSrc"] != nil }
            #expect(deltas.count == 1)
            #expect(deltas.first?.body == Array(#"{"update_count":1,"updated_by":"clientA"}"#.utf8))
        }
    }

    @Test("collections: getCollections and per-request collection indexes")
    func collections() throws {
        let replay = try ConnectionReplay(fixture: try FixtureCache.named("collections.jsonl"), conn: 2)
        let active = replay[.activeToPassive].messages
        let getCollections = try #require(active.first)
        #expect(getCollections.profile == "getCollections")
        #expect(getCollections.properties.pairs.count == 1)
        let request = try #require(try json(getCollections) as? [String: Any])
        #expect(request["collections"] as? [String] == ["store.inventory", "store.orders"])
        let reply = try #require(
            replay[.passiveToActive].messages.first { $0.kind == .reply && $0.number == 1 })
        #expect(reply.body == Array("[{},{}]".utf8))
        let requests = (active + replay[.passiveToActive].messages).filter { $0.kind == .request }
        for message in requests where message.profile != "getCollections" {
            #expect(
                message.properties.pairs.dropFirst().first?.key == "collection", "\(message.properties)")
        }
    }

    @Test("blob-2mb: a 129-frame reply under flow control, reassembled intact")
    func largeBlob() throws {
        let replay = try ConnectionReplay(fixture: try FixtureCache.named("blob-2mb.jsonl"), conn: 0)
        let getAttachment = try #require(
            replay[.passiveToActive].messages.first { $0.profile == "getAttachment" })
        #expect(getAttachment.properties["compress"] == "true")
        let blob = try #require(
            replay[.activeToPassive].messages.first {
                $0.kind == .reply && $0.number == getAttachment.number
            }
        )
        #expect(blob.body.count == 2_097_152)
        #expect(blob.properties.isEmpty)
        let frames = replay[.activeToPassive].dataFrames.filter {
            $0.decoded.number == getAttachment.number && $0.decoded.type == .reply
        }
        #expect(frames.count == 129)
        #expect(frames.reduce(0) { $0 + $1.decoded.flowControlLength } == 2_099_844)
        let acks = replay[.passiveToActive].acksReceived
        #expect(acks.count == 32)
        #expect(acks.map(\.byteCount) == (1...32).map { UInt64($0 * 65_508) })
        #expect(acks.allSatisfy { $0.type == .ackReply && $0.number == 1 })
    }

    @Test(
        "compressed frames need the long-lived inflater",
        arguments: [
            ("cbl-3.2.4/push-oneshot.jsonl", 3), ("cbl-3.2.4/pull-oneshot.jsonl", 3),
            ("cbl-3.2.4/pushpull-continuous.jsonl", 10), ("cbl-3.2.4/update-delete.jsonl", 5),
            ("cbl-3.2.4/blob.jsonl", 2), ("cbl-3.2.4/conflict.jsonl", 7), ("cbl-3.2.4/bulk-500.jsonl", 504),
            ("cbl-3.2.4/auth-fail.jsonl", 1), ("cbl-3.2.4/delta.jsonl", 4), ("cbl-3.2.4/pull-tombstone.jsonl", 11),
            ("cbl-3.2.4/collections.jsonl", 17), ("cbl-3.2.4/blob-2mb.jsonl", 2),
            // The counts of the 4.0.3 README's table.
            ("cbl-4.0.3/push-oneshot.jsonl", 3), ("cbl-4.0.3/pull-oneshot.jsonl", 3),
            ("cbl-4.0.3/pushpull-continuous.jsonl", 17), ("cbl-4.0.3/update-delete.jsonl", 5),
            ("cbl-4.0.3/blob.jsonl", 2), ("cbl-4.0.3/conflict.jsonl", 5), ("cbl-4.0.3/collections.jsonl", 15),
            ("cbl-4.0.3/bulk-500.jsonl", 504), ("cbl-4.0.3/pull-tombstone.jsonl", 11),
            ("cbl-4.0.3/v3-client-to-v4-server.jsonl", 0),
            ("cbl-4.0.3/v3-client-named-collection-to-v4-server.jsonl", 2),
            ("cbl-4.0.3/v4-client-to-v3-server.jsonl", 0),
        ])
    func freshInflaterPerFrameFails(path: String, expectedFailures: Int) throws {
        let fixture = try FixtureCache.at(path)
        var failures = 0
        for frame in fixture.frames
        where frame.opcode == 2 && frame.toolDecode["compressed"] as? Bool == true {
            var index = frame.payload.startIndex
            _ = try Varint.read(from: frame.payload, at: &index)
            _ = try Varint.read(from: frame.payload, at: &index)
            let inflater = try Inflater()
            var output: [UInt8] = []
            do {
                try inflater.inflate(
                    frame.payload[index..<(frame.payload.endIndex - 4)], appendingTo: &output, limit: 1 << 22)
            } catch {
                failures += 1
            }
        }
        #expect(failures == expectedFailures)
    }
}
