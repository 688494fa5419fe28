import Foundation
import Testing

@testable import SyncIdentifiers

@Suite("Blob digests")
struct BlobDigestTests {
    static let emptyDigest = "sha1-2jmj7l5rSw0yVb/vlWAYkK/YBwk="

    @Test("The digest of content is sha1- and padded base64 of its SHA-1")
    func digestOfContent() {
        // Both values computed independently with Python's hashlib + base64.
        #expect(BlobDigest(of: Data()).description == Self.emptyDigest)
        #expect(BlobDigest(of: Array("Hello, blob!".utf8)).description == "sha1-ArH2IhJgRp/90GRqSAdAfa750BE=")
        #expect(BlobDigest(of: Data()).sha1.count == 20)
    }

    @Test("A parsed digest keeps its text and equals the digest of its content")
    func roundTrip() throws {
        let parsed = try BlobDigest(Self.emptyDigest)
        #expect(parsed.description == Self.emptyDigest)
        #expect(parsed == BlobDigest(of: Data()))
        #expect(BlobDigest(sha1: parsed.sha1) == parsed)
        #expect(BlobDigest(sha1: parsed.sha1)?.description == Self.emptyDigest)
        #expect(BlobDigest(sha1: Array(parsed.sha1.dropLast())) == nil)
    }

    @Test("matches tells the content a digest names from any other")
    func matches() throws {
        let digest = try BlobDigest("sha1-ArH2IhJgRp/90GRqSAdAfa750BE=")
        #expect(digest.matches(Array("Hello, blob!".utf8)))
        #expect(!digest.matches(Array("Hello, blob?".utf8)))
    }

    @Test("A spelling with unused bits set names the same blob and is kept as written")
    func nonCanonicalSpelling() throws {
        let spelling = "sha1-2jmj7l5rSw0yVb/vlWAYkK/YBwl="
        let parsed = try BlobDigest(spelling)
        #expect(parsed == BlobDigest(of: Data()))
        #expect(Set([parsed, BlobDigest(of: Data())]).count == 1)
        #expect(parsed.description == spelling)
        #expect(parsed.matches(Data()))
    }

    @Test(
        "Anything but sha1- and 28 base64 characters of 20 bytes is rejected",
        arguments: [
            "", "sha1-", "md5-2jmj7l5rSw0yVb/vlWAYkK/YBwk=", "SHA1-2jmj7l5rSw0yVb/vlWAYkK/YBwk=",
            // Unpadded, doubly padded, and 28 characters of 21 bytes.
            "sha1-2jmj7l5rSw0yVb/vlWAYkK/YBwk", "sha1-2jmj7l5rSw0yVb/vlWAYkK/YBwk==",
            "sha1-2jmj7l5rSw0yVb/vlWAYkK/YBwkA",
            "sha1-not-base64", "sha1-AAAA", "sha1-!!!!7l5rSw0yVb/vlWAYkK/YBwk=", "sha1-2jmj7l5rSw0yVb_vlWAYkK_YBwk=",
            " sha1-2jmj7l5rSw0yVb/vlWAYkK/YBwk=",
        ])
    func rejections(text: String) {
        #expect(throws: InvalidBlobDigest(text: text)) { try BlobDigest(text) }
    }

    @Test("The error names the text")
    func errorDescription() {
        #expect(
            InvalidBlobDigest(text: "sha1-AAAA").description
                == "invalid blob digest 'sha1-AAAA': expected sha1-<28 base64 characters>")
    }
}
