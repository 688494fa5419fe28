import Testing

@testable import SyncJSON

@Suite struct JSONValueTests {
    @Test(arguments: [
        #"{"index":0,"payload":"abcdefghijklmnop","pid":20021,"ts":1795314761.0,"type":"cblpeer-test","writer":"couchbase-lite-c-active"}"#,
        #"[[1,"passive-doc-0","1-b694cc41d6d3e07a7d1289df69b5a5d42fe783ab",0,48]]"#,
        #"{"a":[true,false,null,-0.5e-3,1E+2,{}],"b":"\"\\\n\u0001é😀"}"#,
        "[]", "null", "9007199254740993", #""12::34""#,
    ])
    func compactInputRoundTripsByteForByte(text: String) throws {
        #expect(try json(text).jsonString == text)
    }

    @Test func whitespaceIsDroppedAndEscapesNormalized() throws {
        #expect(try json(" { \"a\" : [ 1 , 2 ] , \"b\":\"\\u00e9\\/\" } ").jsonString == #"{"a":[1,2],"b":"é/"}"#)
        #expect(try json(#""\ud83d\ude00""#) == .string("😀"))
    }

    @Test func keyOrderIsKeptButEqualityIgnoresIt() throws {
        let first = try json(#"{"b":1,"a":2}"#)
        let second = try json(#"{"a":2,"b":1}"#)
        #expect(first == second)
        #expect(first.jsonString == #"{"b":1,"a":2}"#)
        #expect(first.objectValue?.keys == ["b", "a"])
    }

    @Test func numbersKeepTheirSpelling() throws {
        #expect(try json("1.0") != json("1"))
        #expect(try json("9007199254740993").numberValue?.int64Value == 9_007_199_254_740_993)
        #expect(JSONNumber(text: "01") == nil)
        #expect(JSONNumber(text: "-1.5e3")?.doubleValue == -1500)
    }

    @Test(arguments: [
        ("", "unexpected end of input at byte 0"),
        ("[1,]", "unexpected character ']' at byte 3"),
        (#"{"a":1,}"#, "expected a string key at byte 7"),
        (#"{"a":1,"a":2}"#, #"duplicate key "a" at byte 7"#),
        ("01", "unexpected data after the JSON value at byte 1"),
        ("1.", "malformed number at byte 2"),
        ("tru", "invalid literal at byte 0"),
        ("\"a\u{01}\"", "unescaped control character in string at byte 2"),
        (#""\x""#, #"invalid escape '\x' at byte 3"#),
        (#""\ud800""#, "high surrogate without a low surrogate at byte 7"),
        (#""\udc00""#, "lone low surrogate at byte 7"),
        ("[1 2]", "expected ',' or ']' at byte 3"),
        (#"{"a" 1}"#, "expected ':' at byte 5"),
        (#""abc"#, "unterminated string at byte 0"),
        ("{} x", "unexpected data after the JSON value at byte 3"),
    ])
    func malformedJSONIsRejected(text: String, message: String) {
        do {
            _ = try JSONValue(parsing: text)
            Issue.record("accepted \(text)")
        } catch {
            #expect(error.description == message)
        }
    }

    @Test func invalidUTF8IsRejected() {
        #expect(throws: JSONParseError.self) { try JSONValue(parsing: [0x22, 0xC3, 0x28, 0x22]) }
        // The same bytes after an escape, which takes the decoding path rather than the unescaped one.
        #expect(throws: JSONParseError.self) { try JSONValue(parsing: [0x22, 0x5C, 0x6E, 0xC3, 0x28, 0x22]) }
        #expect(throws: JSONParseError.self) { try JSONValue(parsing: [0x22, 0x41, 0xC3, 0x22]) }
    }

    @Test func rawNonASCIIIsKeptOnBothStringPaths() throws {
        #expect(try JSONValue(parsing: Array(#""é😀""#.utf8)) == .string("é😀"))
        #expect(try JSONValue(parsing: Array(#""\té😀""#.utf8)) == .string("\té😀"))
    }

    @Test func deepNestingIsRefused() {
        let deep = String(repeating: "[", count: 300) + String(repeating: "]", count: 300)
        #expect(throws: JSONParseError.self) { try JSONValue(parsing: deep) }
        let allowed = String(repeating: "[", count: 200) + String(repeating: "]", count: 200)
        #expect((try? JSONValue(parsing: allowed)) != nil)
    }

    @Test func objectEditing() {
        var object: JSONObject = ["a": 1, "b": 2]
        object["a"] = nil
        object["c"] = 3
        object["b"] = 4
        #expect(object.keys == ["b", "c"])
        #expect(JSONValue.object(object).jsonString == #"{"b":4,"c":3}"#)
        #expect(object["c"] == 3)
        let reordered: JSONObject = ["c": 3, "b": 4]
        #expect(Set([object, reordered]).count == 1)
        #expect(object != ["b": 4])
    }
}
