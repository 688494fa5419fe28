import Testing

@testable import SyncIdentifiers

@Suite("Revision IDs")
struct RevisionIDTests {
    @Test("A revision ID parses into its generation and digest, and its description is the text again")
    func parsing() throws {
        let parsed = try RevisionID("1-53ae3384db3684f9657c91c271e5592b8a146c8c")
        #expect(parsed.generation == 1)
        #expect(parsed.digest == "53ae3384db3684f9657c91c271e5592b8a146c8c")
        #expect(parsed.description == "1-53ae3384db3684f9657c91c271e5592b8a146c8c")
        #expect(try RevisionID("4294967295-ab").generation == UInt32.max)
        #expect(try RevisionID(generation: 12, digest: "00ff") == RevisionID("12-00ff"))
    }

    @Test("Revision IDs order by generation, then by digest text")
    func ordering() throws {
        #expect(try RevisionID("2-aa") < RevisionID("10-00"))
        #expect(try RevisionID("3-ab") < RevisionID("3-b0"))
        #expect(try !(RevisionID("3-b0") < RevisionID("3-b0")))
    }

    @Test(
        "Each of LiteCore's rules refuses a text, with its reason",
        arguments: [
            ("abc", InvalidRevisionID.Reason.missingSeparator),
            ("", .missingSeparator),
            ("-aa", .generationNotDecimal),
            ("+1-aa", .generationNotDecimal),
            ("x-ab", .generationNotDecimal),
            ("0-aa", .generationStartsWithZero),
            ("01-aa", .generationStartsWithZero),
            ("4294967296-aa", .generationTooLarge),
            ("99999999999999999999999-a", .generationTooLarge),
            ("1-", .emptyDigest),
            ("1-ABC1", .digestNotLowercaseHex),
            ("1-xyz0", .digestNotLowercaseHex),
            ("1-ab-cd", .digestNotLowercaseHex),
            ("1-abc", .oddDigestLength),
            ("1-" + String(repeating: "ab", count: 42), .digestTooLong(maximumBytes: 41)),
        ])
    func refusedTexts(text: String, reason: InvalidRevisionID.Reason) {
        #expect(throws: InvalidRevisionID(text: text, reason: reason)) { try RevisionID(text) }
    }

    @Test("The same rules refuse an ID given by its parts, named by its text")
    func refusedParts() {
        let refusals: [(UInt32, String, InvalidRevisionID.Reason)] = [
            (0, "ab", .generationBelowOne),
            (1, "", .emptyDigest),
            (1, "ABCD", .digestNotLowercaseHex),
            (1, "abc", .oddDigestLength),
            (128, String(repeating: "ab", count: 41), .digestTooLong(maximumBytes: 40)),
        ]
        for (generation, digest, reason) in refusals {
            #expect(throws: InvalidRevisionID(text: "\(generation)-\(digest)", reason: reason)) {
                try RevisionID(generation: generation, digest: digest)
            }
        }
    }

    @Test("The digest may take what the generation's varint leaves of LiteCore's 42 bytes")
    func digestLimitDependsOnGenerationVarint() throws {
        // The first generation of each varint length (7 bits a byte), and the last one of the one before.
        let limits: [(generation: UInt32, maximumBytes: Int)] = [
            (1, 41), (127, 41), (128, 40), (16383, 40), (16384, 39), (2_097_151, 39), (2_097_152, 38),
            (268_435_455, 38), (268_435_456, 37), (.max, 37),
        ]
        for (generation, maximumBytes) in limits {
            let longest = String(repeating: "ab", count: maximumBytes)
            #expect(try RevisionID(generation: generation, digest: longest).digest == longest)
            let tooLong = "\(generation)-\(longest)ab"
            #expect(throws: InvalidRevisionID(text: tooLong, reason: .digestTooLong(maximumBytes: maximumBytes))) {
                try RevisionID(tooLong)
            }
        }
    }

    @Test("Changed for the store, which had rules of its own: longer digests beside small generations, no leading 0")
    func changesFromTheStoreRules() throws {
        // The store allowed a flat 37 bytes whatever the generation.
        for digestBytes in 38...41 {
            #expect(throws: Never.self) { try RevisionID("1-" + String(repeating: "ab", count: digestBytes)) }
        }
        // The store read these as 1-ab and 1-ab; LiteCore refuses them.
        for text in ["01-ab", "0001-ab"] {
            #expect(throws: InvalidRevisionID(text: text, reason: .generationStartsWithZero)) { try RevisionID(text) }
        }
    }

    @Test("Every ID the store could write under its former rules is accepted, so stored revisions stay readable")
    func formerStoreIDsStillParse() throws {
        // The store wrote the description of IDs it had validated: a generation of 1...2^32-1 and an even-length,
        // lowercase hex digest of 1 to 37 bytes.
        for generation: UInt32 in [1, 9, 10, 99, 100, 127, 128, 16384, 2_097_152, 268_435_456, .max] {
            for digestBytes in 1...37 {
                let text = "\(generation)-" + String(repeating: "0f", count: digestBytes)
                #expect(try RevisionID(text).description == text)
            }
        }
    }

    @Test("A digest made from bytes is their lowercase hex, zeros kept")
    func digestBytes() {
        #expect(RevisionID(generation: 2, digestBytes: [0x00, 0x0F, 0xA0, 0xFF]).description == "2-000fa0ff")
    }

    @Test("An invalid revision ID names the text and the rule it breaks")
    func errorDescription() {
        #expect(
            InvalidRevisionID(text: "x1", reason: .missingSeparator).description
                == "invalid revision ID 'x1': expected <generation>-<digest>")
        #expect(
            InvalidRevisionID(text: "1-ab", reason: .digestTooLong(maximumBytes: 41)).description
                == "invalid revision ID '1-ab': the digest is longer than 41 bytes")
    }
}
