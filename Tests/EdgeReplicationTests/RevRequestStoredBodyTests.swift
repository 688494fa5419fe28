import Foundation
import ReplicationProtocol
import Testing

@testable import EdgeReplication

@Suite("Stored form of a received body")
struct RevRequestStoredBodyTests {
    private func storedBody(of text: String) throws -> (object: JSONObject, data: Data) {
        let request = RevRequest(docID: "doc", revisionID: try WireRevisionID("1-abcd"), body: Array(text.utf8))
        return try request.storedBody(try request.bodyObject())
    }

    @Test("a body without top-level _ properties is stored as the bytes it came in")
    func plainBodyKeepsItsBytes() throws {
        let text = #"{ "name": "widget",  "tags": ["a", "b"], "nested": {"_kept": 1} }"#
        let stored = try storedBody(of: text)
        #expect(String(decoding: stored.data, as: UTF8.self) == text)
        #expect(stored.object["name"] == .string("widget"))
    }

    @Test("top-level _ properties are dropped and the body is serialised again")
    func specialPropertiesAreStripped() throws {
        let stored = try storedBody(of: #"{"name": "widget", "_revisions": {"start": 1}}"#)
        #expect(stored.object.keys == ["name"])
        #expect(String(decoding: stored.data, as: UTF8.self) == #"{"name":"widget"}"#)
    }

    @Test("an empty body is stored as an empty object")
    func emptyBodyIsAnEmptyObject() throws {
        let stored = try storedBody(of: "")
        #expect(stored.object.keys.isEmpty)
        #expect(String(decoding: stored.data, as: UTF8.self) == "{}")
    }
}
