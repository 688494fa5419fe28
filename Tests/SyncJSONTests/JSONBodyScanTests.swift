import Testing

@testable import SyncJSON

@Suite("JSON body scan")
struct JSONBodyScanTests {
    private func digests(_ body: String) throws(JSONBodyError) -> Set<String> {
        try JSONBodyScan(scanning: Array(body.utf8)).blobDigests
    }

    @Test(
        "Valid JSON objects are accepted",
        arguments: [
            "{}", " { } ", #"{"a":[1,-2.5e+3,0,0.25,true,false,null,"s",{"b":[]}]}"#,
            #"{"esc":"\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00","utf8":"héllo 😀"}"#,
        ])
    func valid(body: String) throws {
        #expect(try digests(body) == [])
    }

    @Test(
        "Invalid JSON is rejected",
        arguments: [
            "", "[]", "\"s\"", "{", "}", #"{"a"}"#, #"{"a":1,}"#, #"{a:1}"#, #"{"a":01}"#,
            #"{"a":1.}"#, #"{"a":-}"#,
            #"{"a":tru}"#, #"{"a":"\q"}"#, #"{"a":"\u12"}"#, "{\"a\":\"\u{01}\"}", #"{"a":[1 2]}"#,
            "{} x",
        ])
    func invalid(body: String) {
        #expect(throws: JSONBodyError.self) { try digests(body) }
    }

    @Test("Invalid UTF-8 and excessive nesting are rejected")
    func hostileInput() {
        #expect(throws: JSONBodyError.self) {
            try JSONBodyScan(scanning: [0x7B, 0x22, 0xC3, 0x28, 0x22, 0x3A, 0x31, 0x7D])
        }
        let deep =
            #"{"a":"# + String(repeating: "[", count: 10_000)
            + String(repeating: "]", count: 10_000) + "}"
        #expect(throws: JSONBodyError.self) { try digests(deep) }
    }

    @Test("Blob dictionaries anywhere and legacy _attachments entries are collected")
    func blobReferences() throws {
        let body = #"""
            {"photo":{"@type":"blob","digest":"sha1-AAAAAAAAAAAAAAAAAAAAAAAAAAA=","length":5},
             "list":[{"digest":"sha1-BBBBBBBBBBBBBBBBBBBBBBBBBBB=","@type":"blob"},{"digest":"sha1-not-a-blob"}],
             "_attachments":{"a.txt":{"digest":"sha1-CCCC\/CCCCCCCCCCCCCCCCCCCCCC=","stub":true}},
             "nested":{"_attachments":{"x":{"digest":"sha1-ignored-not-top-level"}}},
             "typed":{"@type":"other","digest":"sha1-ignored-wrong-type"}}
            """#
        #expect(
            try digests(body) == [
                "sha1-AAAAAAAAAAAAAAAAAAAAAAAAAAA=", "sha1-BBBBBBBBBBBBBBBBBBBBBBBBBBB=",
                "sha1-CCCC/CCCCCCCCCCCCCCCCCCCCCC=",
            ])
    }

    @Test("a body with blobs, a top-level _ property or duplicate keys is valid but not plain")
    func validButNotPlain() throws {
        for body in [
            #"{"photo":{"@type":"blob","digest":"sha1-AAAAAAAAAAAAAAAAAAAAAAAAAAA="}}"#, #"{"_id":"a"}"#,
            #"{"a":1,"a":2}"#, #"{"s":"\ud800"}"#, #"{"\u0061":1}"#,
        ] {
            #expect(try !JSONBodyScan(scanning: Array(body.utf8)).isPlain, "\(body)")
        }
        #expect(try JSONBodyScan(scanning: Array(#"{"a":{"_b":[1,"x"]}}"#.utf8)).isPlain)
    }
}
