import EdgeGatewayTestSupport
import SyncIdentifiers
import Testing

@testable import ReplicationProtocol

@Suite struct RevTests {
    @Test func pushedTombstoneFromFixture() throws {
        let properties = props([
            ("Profile", "rev"), ("id", "doc-1"), ("rev", "2-1b5c18c54e2b1509a60ee8943dc6e6e32084d810"),
            ("sequence", "5"),
            ("noconflicts", "1"), ("deleted", "1"), ("history", "1-b885d40d765a9a76dcb89573db0a291e082d077c"),
        ])
        let rev = try RevRequest(properties: properties, body: bytes("{}"))
        #expect(rev.docID == "doc-1")
        #expect(rev.deleted && rev.noConflicts)
        #expect(rev.sequence == 5)
        #expect(rev.history.ancestors == [try revID("1-b885d40d765a9a76dcb89573db0a291e082d077c")])
        #expect(try rev.bodyObject().isEmpty)
        #expect(rev.encode().properties == properties)
    }

    @Test func deltaRevFromFixture() throws {
        let properties = props([
            ("Profile", "rev"), ("id", "delta-doc-0"), ("rev", "2-2005aa4e6dda2159267bcd8e4a32331c298b648f"),
            ("sequence", "2"),
            ("noconflicts", "1"), ("history", "1-a1518e5339fe2439d7e284018f814924b2172eff"),
            ("deltaSrc", "1-a1518e5339fe2439d7e284018f814924b2172eff"),
        ])
        let rev = try RevRequest(properties: properties, body: bytes(#"{"update_count":1,"updated_by":"clientA"}"#))
        #expect(rev.deltaSource == .tree(try revID("1-a1518e5339fe2439d7e284018f814924b2172eff")))
        #expect(rev.encode().properties == properties)
        #expect(try rev.bodyObject() == ["update_count": 1, "updated_by": "clientA"])
    }

    @Test func collectionRevAndTwoEntryHistoryFromFixture() throws {
        let properties = props([
            ("Profile", "rev"), ("collection", "0"), ("id", "w-doc-0"),
            ("rev", "3-7be36fa40b7b74399b78eab88ddcbaf83eabf51a"),
            ("sequence", "4"),
            ("history", "2-f14ce6e362823b1f3999a329c148487d82e4dff1,1-5e77fddacde8f9162366e4d9b2ecbf806d601810"),
        ])
        let rev = try RevRequest(properties: properties, body: bytes(#"{"type":"cblpeer-test"}"#))
        #expect(rev.collection == 0)
        #expect(rev.history.ancestors.map(\.generation) == [2, 1])
        #expect(!rev.noConflicts && !rev.deleted)
        #expect(rev.encode().properties == properties)
    }

    @Test func replacementRevRoundTrip() throws {
        let rev = RevRequest(
            docID: "d", revision: .tree(try revID("3-cc")), history: RevisionHistory([try revID("2-bb")]),
            sequence: "7:12", replacedRevision: .tree(try revID("2-bb")), collection: 3, body: bytes(#"{"n":3}"#))
        #expect(try roundTrip(rev) == rev)
        #expect(rev.encode().properties["sequence"] == #""7:12""#)
    }

    @Test func missingIDAndBadRevisions() {
        expectProtocolError(.missingProperty("id", profile: .rev)) {
            _ = try RevRequest(properties: props([("Profile", "rev"), ("rev", "1-aa")]), body: bytes("{}"))
        }
        expectProtocolError(.missingProperty("rev", profile: .rev)) {
            _ = try RevRequest(properties: props([("id", "d")]), body: bytes("{}"))
        }
        expectProtocolError(.invalidRevisionID("x1", reason: "expected <generation>-<digest>")) {
            _ = try RevRequest(properties: props([("id", "d"), ("rev", "x1")]), body: bytes("{}"))
        }
        expectProtocolError(
            .invalidHistory("1-aa", reason: "1-aa should have generation 2 to follow the revision 3-cc")
        ) {
            _ = try RevRequest(
                properties: props([("id", "d"), ("rev", "3-cc"), ("history", "1-aa")]), body: bytes("{}"))
        }
        expectProtocolError(.invalidJSON(context: "rev body of 'd'", reason: "expected a string key at byte 1")) {
            _ = try RevRequest(properties: props([("id", "d"), ("rev", "1-aa")]), body: bytes("{,}")).bodyObject()
        }
    }

    @Test func noRevRoundTripAndSeqFallback() throws {
        let norev = NoRevRequest(
            docID: "d", revision: .tree(try revID("2-ab")), sequence: 12, error: 404, reason: "missing", collection: 0)
        #expect(try roundTrip(norev) == norev)
        #expect(
            pairs(norev.encode().properties) == [
                "Profile=norev", "collection=0", "id=d", "rev=2-ab", "sequence=12", "error=404", "reason=missing",
            ])
        let legacy = try NoRevRequest(properties: props([("id", "d"), ("rev", "2-ab"), ("seq", #""3:4""#)]), body: [])
        #expect(legacy.sequence == .string("3:4"))
        expectProtocolError(.invalidProperty("error", value: "gone", profile: .norev, expected: "a numeric status")) {
            _ = try NoRevRequest(properties: props([("id", "d"), ("rev", "2-ab"), ("error", "gone")]), body: [])
        }
    }
}

@Suite struct RevisionIDTests {
    /// The words a peer is answered with (RELIABILITY.md quotes them), for each rule a received ID can break.
    @Test(arguments: [
        ("0-aa", "the generation must be at least 1, without leading zeros"),
        ("01-aa", "the generation must be at least 1, without leading zeros"),
        ("+1-aa", "the generation is not a decimal number"),
        ("-aa", "the generation is not a decimal number"),
        ("4294967296-aa", "the generation exceeds 2^32-1"),
        ("1-", "the digest is empty"),
        ("1-ABC1", "the digest must be lowercase hexadecimal"),
        ("1-abc", "the digest has an odd number of hex digits"),
        ("1-xyz0", "the digest must be lowercase hexadecimal"),
        ("abc", "expected <generation>-<digest>"),
        ("128-" + String(repeating: "ab", count: 41), "the digest is longer than 40 bytes"),
    ])
    func invalidIDs(text: String, reason: String) {
        expectProtocolError(.invalidRevisionID(text, reason: reason)) { _ = try RevisionID(received: text) }
    }

    @Test func historyParsingToleratesSpaces() throws {
        let history = try RevisionHistory(parsing: "3-cc, 2-bb ,1-aa")
        #expect(history.ancestors.map(\.generation) == [3, 2, 1])
        #expect(history.description == "3-cc,2-bb,1-aa")
        #expect(try RevisionHistory(parsing: nil).isEmpty)
        #expect(try RevisionHistory(parsing: "").isEmpty)
        expectProtocolError(.invalidHistory("2-bb,,1-aa", reason: "it has an empty entry")) {
            _ = try RevisionHistory(parsing: "2-bb,,1-aa")
        }
    }

    @Test func historyMustDescendByOne() throws {
        try RevisionHistory(parsing: "3-cc,2-bb,1-aa").validate(below: revID("4-dd"))
        try RevisionHistory().validate(below: revID("9-dd"))
        expectProtocolError(
            .invalidHistory("3-cc,1-aa", reason: "1-aa should have generation 2 to follow its predecessor")
        ) {
            try RevisionHistory(parsing: "3-cc,1-aa").validate(below: revID("4-dd"))
        }
        expectProtocolError(
            .invalidHistory("1-aa", reason: "1-aa should have generation 0 to follow the revision 1-dd")
        ) {
            try RevisionHistory(parsing: "1-aa").validate(below: revID("1-dd"))
        }
    }

    @Test func truncationStopsAtFirstKnownAncestorInclusive() throws {
        let ancestry = try ["4-dd", "3-cc", "2-bb", "1-aa"].map(revID)
        let known: Set = [try revID("2-bb"), try revID("1-aa")]
        #expect(RevisionHistory.truncated(ancestry, stoppingAtFirstOf: known).ancestors == Array(ancestry[0...2]))
        #expect(
            RevisionHistory.truncated(ancestry, stoppingAtFirstOf: [], maximumLength: 2).ancestors
                == Array(ancestry[0...1]))
        #expect(RevisionHistory.truncated(ancestry, stoppingAtFirstOf: []).ancestors == ancestry)
        #expect(RevisionHistory.truncated(ancestry, stoppingAtFirstOf: [ancestry[0]]).ancestors == [ancestry[0]])
        #expect(RevisionHistory.truncated(ancestry, stoppingAtFirstOf: [], maximumLength: 0).isEmpty)
    }

    @Test func gapsAreFilledWithFadedPlaceholders() throws {
        var generator = SplitMix64(seed: 7)
        let history = RevisionHistory.fillingGaps(
            in: try ["4-dd", "1-aa"].map(revID), below: try revID("5-ee"), using: &generator)
        // `faded000` and the generator's next 64 bits as 16 hex digits, zero-padded (the second has a leading 0).
        #expect(history.description == "4-dd,3-faded00063cbe1e459320dd7,2-faded000044c3cd7f43c661c,1-aa")
        try history.validate(below: revID("5-ee"))
    }
}
