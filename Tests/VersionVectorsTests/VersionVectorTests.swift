import Foundation
import SyncIdentifiers
import Testing

@testable import VersionVectors

/// Versions and vectors as the Couchbase Lite 4.0.3 captures carry them (WIRE-NOTES.md of the cbl-4.0.3 fixtures).
@Suite("Versions and hybrid logical vectors")
struct VersionVectorTests {
    static let clientA = "W4IpzVcVScq75WMaxJ6WUA"
    static let clientB = "HDL3DmjHQ6aGU6XSGrYP5g"

    @Test("A captured version reads as wall-clock nanoseconds and a 16-byte source, and writes back unchanged")
    func capturedVersion() throws {
        let version = try Version("18ebd07f63c50000@ddja2MCRTril1aX52skGJg")
        #expect(version.timestamp == 0x18eb_d07f_63c5_0000)
        // The same run's checkpoint says "time":1795758122.
        #expect(version.timestamp / 1_000_000_000 == 1_795_758_121)
        // The 16 bytes Foundation's base64 decoder reads from the same text.
        let bytes = try #require(Data(base64Encoded: "ddja2MCRTril1aX52skGJg=="))
        #expect(version.source == SourceID(bytes: Array(bytes)))
        #expect(version.description == "18ebd07f63c50000@ddja2MCRTril1aX52skGJg")
    }

    @Test("Any 16 bytes write as Foundation's base64 without padding, and read back as the same source")
    func sourceTextRoundTrips() throws {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<1_000 {
            let bytes = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let source = SourceID(bytes: bytes)
            #expect(source.description == String(Data(bytes).base64EncodedString().dropLast(2)))
            #expect(try SourceID(Substring(source.description)) == source)
        }
        let timestamps: [UInt64] = [1, 0xF, 0x10, 0x18eb_d07f_63c5_0000, .max]
        for timestamp in timestamps {
            let version = Version(timestamp: timestamp, source: SourceID(bytes: Array(repeating: 7, count: 16)))
            #expect(version.description.hasPrefix(String(timestamp, radix: 16) + "@"))
            #expect(try Version(version.description) == version)
        }
    }

    @Test("A version inside a longer text reads from its own bytes only, and a vector's spaces and cases are its own")
    func parsesSlicesInPlace() throws {
        let line = "cv=18EBD07F63C50000@ddja2MCRTril1aX52skGJg;"
        let start = try #require(line.firstIndex(of: "="))
        let end = try #require(line.firstIndex(of: ";"))
        let slice = line[line.index(after: start)..<end]
        #expect(try Version(slice) == Version("18ebd07f63c50000@ddja2MCRTril1aX52skGJg"))
        let vector = try HybridLogicalVector(
            "  18ebd0850a630000@\(Self.clientA) ,18ebd08474560000@\(Self.clientB),  "
                + "18ebd08474550000@ddja2MCRTril1aX52skGJg ;  3-ab , 2-cd  ")
        #expect(vector.merge.count == 2)
        #expect(vector.legacy.map(\.description) == ["3-ab", "2-cd"])
        #expect(try HybridLogicalVector(vector.description) == vector)
    }

    @Test("Every shape of vector writes its text and its rev history, and reads back from either")
    func vectorShapesWriteAndReadBack() throws {
        let cv = "18ebd0850a630000@\(Self.clientA)"
        let m1 = "18ebd08474560000@\(Self.clientB)"
        let m2 = "18ebd08474550000@ddja2MCRTril1aX52skGJg"
        let p1 = "18ebd08474540000@AAAAAAAAAAAAAAAAAAAAAA"
        let shapes: [(text: String, history: String?)] = [
            (cv, nil),
            ("\(cv); \(p1)", p1),
            ("\(cv); 2-ab", "2-ab"),
            ("\(cv); \(p1), 3-ab, 2-cd", "\(p1), 3-ab, 2-cd"),
            ("\(cv), \(m1), \(m2)", "\(m1), \(m2); "),
            ("\(cv), \(m1), \(m2); \(p1), 3-ab", "\(m1), \(m2); \(p1), 3-ab"),
        ]
        for (text, history) in shapes {
            let vector = try HybridLogicalVector(text)
            #expect(vector.description == text)
            #expect(vector.history == history)
            #expect(try HybridLogicalVector(revision: vector.current.description, history: vector.history) == vector)
        }
    }

    @Test("The node's source ID is its node ID's 16 bytes, in base64 without padding")
    func sourceFromNodeID() throws {
        let uuid = try #require(UUID(uuidString: "75d8dad8-c091-4eb8-a5d5-a5f9dac90626"))
        let source = SourceID(uuid: uuid)
        #expect(source.description == "ddja2MCRTril1aX52skGJg")
        #expect(try SourceID("ddja2MCRTril1aX52skGJg"[...]) == source)
        // URL-safe spelling of the same bytes reads as the same source.
        #expect(try SourceID("-_-_-_-_-_-_-_-_-_-_-w"[...]) == SourceID("+/+/+/+/+/+/+/+/+/+/+w"[...]))
    }

    @Test(
        "Malformed versions name their problem",
        arguments: [
            ("18ebd07f63c50000", InvalidVersion.Reason.missingSeparator),
            ("18ebd07g63c50000@ddja2MCRTril1aX52skGJg", .timestampNotHex),
            ("@ddja2MCRTril1aX52skGJg", .timestampNotHex),
            ("118ebd07f63c50000@ddja2MCRTril1aX52skGJg", .timestampTooLong),
            ("0@ddja2MCRTril1aX52skGJg", .timestampZero),
            ("18ebd07f63c50000@ddja2MCRTril1aX52skGJ", .sourceLength(21)),
            ("18ebd07f63c50000@ddja2MCRTril1aX52skGJg==", .sourceLength(24)),
            ("18ebd07f63c50000@ddja2MCRTril1aX52sk!Jg", .sourceNotBase64),
            // The last character carries 2 bits of the 16th byte: "h" sets bits beyond them.
            ("18ebd07f63c50000@ddja2MCRTril1aX52skGJh", .sourceNotBase64),
        ])
    func malformedVersion(text: String, reason: InvalidVersion.Reason) {
        #expect(throws: InvalidVersion(text: text, reason: reason)) { try Version(text) }
    }

    @Test("Only text holding an '@' names versions; rev-tree IDs, empty text and other scripts do not")
    func versionTextIsToldApart() {
        #expect(Version.isVersionText("18ebd0850a630000@\(Self.clientB)"))
        #expect(Version.isVersionText("1-abc, 18ebd0850a630000@\(Self.clientB)"[...]))
        #expect(Version.isVersionText("@"))
        #expect(!Version.isVersionText("2-46d36d1da6f56ac9e09d5647761ed6a35fec7175"))
        #expect(!Version.isVersionText(""))
        // A full-width commercial at is another character, and no version separator.
        #expect(!Version.isVersionText("18ebd0850a630000\u{FF20}\(Self.clientB)"))
    }

    @Test("A proposeChanges vector: the current version, then the previous ones after '; '")
    func proposedVector() throws {
        let text = "18ebd0850a630000@\(Self.clientB); 18ebd08474560000@\(Self.clientA)"
        let vector = try HybridLogicalVector(text)
        #expect(vector.current == (try Version("18ebd0850a630000@\(Self.clientB)")))
        #expect(vector.merge.isEmpty)
        #expect(vector.previous == [try Version("18ebd08474560000@\(Self.clientA)")])
        #expect(vector.description == text)
        #expect(vector.history == "18ebd08474560000@\(Self.clientA)")
        #expect(try HybridLogicalVector("18ebd0850a630000@\(Self.clientB)").history == nil)
    }

    @Test("A rev's rev and history make the same vector; merge versions come before ';' in the history")
    func revisionAndHistory() throws {
        let rev = try HybridLogicalVector(
            revision: "18ebd0850a630000@\(Self.clientB)", history: "18ebd084db420001@\(Self.clientA)")
        #expect(rev == (try HybridLogicalVector("18ebd0850a630000@\(Self.clientB); 18ebd084db420001@\(Self.clientA)")))
        let third = "ddja2MCRTril1aX52skGJg"
        let merged = try HybridLogicalVector(
            revision: "18ebd0860a630000@\(third)",
            history: "18ebd0850a630000@\(Self.clientB),18ebd084db420001@\(Self.clientA);")
        #expect(merged.merge.count == 2)
        #expect(merged.previous.isEmpty)
        #expect(try HybridLogicalVector(revision: merged.current.description, history: merged.history) == merged)
    }

    @Test("Rev-tree history behind the versions is kept as legacy revisions, newest first")
    func legacyHistory() throws {
        let vector = try HybridLogicalVector("18ebd0850a630000@\(Self.clientB); 3-abcd, 2-ef01")
        #expect(vector.previous.isEmpty)
        #expect(vector.legacy.map(\.description) == ["3-abcd", "2-ef01"])
        #expect(vector.description == "18ebd0850a630000@\(Self.clientB); 3-abcd, 2-ef01")
    }

    @Test(
        "Malformed vectors name their problem",
        arguments: [
            ("", InvalidVersion.Reason.emptyVector),
            ("; 18ebd08474560000@\(clientA)", .emptyVector),
            ("18ebd0850a630000@\(clientB), 18ebd08474560000@\(clientA)", .loneMergeVersion),
            ("18ebd0850a630000@\(clientB); 18ebd08474560000@\(clientB)", .repeatedSource(try! SourceID(clientB[...]))),
            ("18ebd0850a630000@\(clientB); 2-ef01, 18ebd08474560000@\(clientA)", .legacyRevisionBeforeVersion),
            ("18ebd0850a630000@\(clientB); 02-ef01", .invalidLegacyRevision(.generationStartsWithZero)),
            ("18ebd0850a630000@\(clientB); 18ebd084745600001@\(clientA)", .timestampTooLong),
        ])
    func malformedVector(text: String, reason: InvalidVersion.Reason) {
        #expect(throws: InvalidVersion(text: text, reason: reason)) { try HybridLogicalVector(text) }
    }

    @Test("Comparison by current versions: same, newer, older, conflicting")
    func comparison() throws {
        let a1 = try HybridLogicalVector("18ebd08474560000@\(Self.clientA)")
        let a2 = try HybridLogicalVector("18ebd084db420001@\(Self.clientA)")
        let bOverA1 = try HybridLogicalVector("18ebd0850a630000@\(Self.clientB); 18ebd08474560000@\(Self.clientA)")
        #expect(a1.compare(to: a1) == .same)
        #expect(a2.compare(to: a1) == .newer)
        #expect(a1.compare(to: a2) == .older)
        #expect(bOverA1.compare(to: a1) == .newer)
        #expect(a1.compare(to: bOverA1) == .older)
        // B edited A's first version while A wrote its second: the conflict of conflict.jsonl.
        #expect(bOverA1.compare(to: a2) == .conflicting)
        #expect(a2.compare(to: bOverA1) == .conflicting)
    }

    @Test("The clock follows the wall clock's tick, counts within one tick, and never goes back")
    func clock() {
        var clock = HybridLogicalClock()
        let tick: UInt64 = 0x18eb_d082_ff70_0000
        #expect(clock.next(wallClockNanoseconds: tick + 1234) == tick)
        #expect(clock.next(wallClockNanoseconds: tick + 5678) == tick + 1)
        // The wall clock set back: still ahead of the last timestamp.
        #expect(clock.next(wallClockNanoseconds: tick - 1_000_000_000) == tick + 2)
        clock.observe(tick + 0x10_0000)
        #expect(clock.next(wallClockNanoseconds: tick) == tick + 0x10_0001)
        var restarted = HybridLogicalClock(last: clock.last)
        #expect(restarted.next(wallClockNanoseconds: 0) == clock.last + 1)
    }
}
