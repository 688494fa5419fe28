import Foundation
import ReplicationProtocol
import SyncIdentifiers
import SyncJSON
import Testing

@testable import EdgeReplication

@Suite("Stored form of a received body")
struct RevRequestStoredBodyTests {
    private func storedBody(
        of text: String, refusingReserved: Bool = false
    ) throws -> RevRequest.StoredBody {
        let request = RevRequest(docID: "doc", revision: .tree(try RevisionID("1-abcd")), body: Array(text.utf8))
        return try request.storedBody(refusingReserved: refusingReserved)
    }

    @Test("a body without top-level _ properties is stored as the bytes it came in")
    func plainBodyKeepsItsBytes() throws {
        let text = #"{ "name": "widget",  "tags": ["a", "b"], "nested": {"_kept": 1} }"#
        let stored = try storedBody(of: text)
        #expect(String(decoding: stored.data, as: UTF8.self) == text)
        #expect(stored.blobs.isEmpty)
        // The one scan of the body travels with it, so that the store does not scan it again.
        #expect(stored.scan == (try JSONBodyScan(scanning: Array(stored.data))))
    }

    @Test("top-level _ properties are dropped and the body is serialised again")
    func specialPropertiesAreStripped() throws {
        let stored = try storedBody(of: #"{"name": "widget", "_revisions": {"start": 1}}"#)
        #expect(String(decoding: stored.data, as: UTF8.self) == #"{"name":"widget"}"#)
        #expect(stored.scan == nil, "a scan of the bytes as received does not describe the body as stored")
    }

    @Test("a pushed body with a reserved property is refused")
    func reservedPropertyIsRefused() throws {
        #expect(throws: ProtocolError.self) {
            try storedBody(of: #"{"name": "widget", "_rev": "1-abcd"}"#, refusingReserved: true)
        }
    }

    @Test("a blob keeps its bytes and is listed for fetching")
    func blobIsListed() throws {
        let digest = "sha1-" + Data(repeating: 7, count: 20).base64EncodedString()
        let text = #"{"photo":{"@type":"blob","digest":"\#(digest)","length":3}}"#
        let stored = try storedBody(of: text)
        #expect(String(decoding: stored.data, as: UTF8.self) == text)
        #expect(stored.blobs.map(\.digest.description) == [digest])
        #expect(stored.scan?.blobDigests == [digest], "the body is kept as received, so its scan serves the store")
    }

    @Test("an empty body is stored as an empty object")
    func emptyBodyIsAnEmptyObject() throws {
        let stored = try storedBody(of: "")
        #expect(String(decoding: stored.data, as: UTF8.self) == "{}")
    }

    @Test("an invalid body is refused with the parser's error")
    func invalidBodyIsRefused() throws {
        #expect(throws: ProtocolError.self) { try storedBody(of: #"{"a":1,"a":2}"#) }
    }
}
