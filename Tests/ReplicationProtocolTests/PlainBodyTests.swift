import SyncJSON
import Testing

@testable import ReplicationProtocol

@Suite("Plain document bodies, recognised without a JSON tree")
struct PlainBodyTests {
    private func isPlain(_ text: String) -> Bool {
        DocumentBody.isPlain(Array(text.utf8))
    }

    /// What `isPlain` promises whenever it answers true, checked with the full parser.
    private func isPlainByFullParse(_ bytes: [UInt8]) -> Bool {
        guard case .object(let object) = try? JSONValue(parsing: bytes) else { return false }
        func hasTypeKey(_ value: JSONValue) -> Bool {
            switch value {
            case .object(let object): object.keys.contains("@type") || object.contains { hasTypeKey($0.1) }
            case .array(let elements): elements.contains(where: hasTypeKey)
            default: false
            }
        }
        return !DocumentBody.hasSpecialProperties(object) && !hasTypeKey(.object(object))
            && BlobReference.blobDictionaries(in: object).isEmpty
    }

    static let plainBodies = [
        #"{}"#,
        #" { "n" : 1 , "type":"reading" } "#,
        #"{"name":"widget","tags":["a","b"],"nested":{"_kept":1,"deeper":[{"x":null},true,false]}}"#,
        #"{"numbers":[0,-0,1.5,-2e10,3E+2,4.25e-3,12345678901234567890]}"#,
        #"{"text":"caf\u00e9 \"quoted\" line\nbreak \/ tab\t \ud83d\ude00","utf8":"café 😀 ✓"}"#,
        #"{"a":{"a":{"a":1}},"b":[{"a":1},{"a":2}]}"#,
    ]

    @Test("ordinary documents are plain, and the full parser agrees", arguments: plainBodies)
    func plain(text: String) {
        #expect(isPlain(text))
        #expect(isPlainByFullParse(Array(text.utf8)))
    }

    static let valuableBodies = [
        #"{"_attachments":{"a.txt":{"digest":"sha1-x","stub":true}}}"#,
        #"{"name":"x","_deleted":true}"#,
        #"{"photo":{"@type":"blob","digest":"sha1-x","length":3}}"#,
        #"{"list":[{"@type":"other"}]}"#,
    ]

    @Test("top-level _ properties and @type keys need the full parse", arguments: valuableBodies)
    func needsTree(text: String) throws {
        #expect(!isPlain(text))
        _ = try JSONValue(parsing: text)
    }

    static let invalidBodies: [[UInt8]] =
        [
            #"{"a":1,"a":2}"#, #"{"o":{"k":1,"k":1}}"#, #"{"a":1,}"#, #"{"a":01}"#, #"{"a":1.}"#, #"{"a":-}"#,
            #"{"a":"\ud800"}"#, #"{"a":"\udc00x"}"#, #"{"a":"\ud800\u0041"}"#, #"{"a":"\x"}"#, #"{"a":"\u12g4"}"#,
            #"{"a":tru}"#, #"{"a":nul}"#, #"{"a":1} x"#, #"{"a":1"#, #"{"a""#, #"{"a":[1,2}"#, "",
            "{\"a\":\"\u{01}\"}",
        ].map { Array($0.utf8) } + [
            [0x7B, 0x22, 0x61, 0x22, 0x3A, 0x22, 0xC0, 0x80, 0x22, 0x7D],  // overlong NUL
            [0x7B, 0x22, 0x61, 0x22, 0x3A, 0x22, 0xED, 0xA0, 0x80, 0x22, 0x7D],  // UTF-8 encoded surrogate
            [0x7B, 0x22, 0x61, 0x22, 0x3A, 0x22, 0xF5, 0x80, 0x80, 0x80, 0x22, 0x7D],  // past U+10FFFF
            [0x7B, 0x22, 0x61, 0x22, 0x3A, 0x22, 0xE2, 0x82, 0x22, 0x7D],  // truncated sequence
            Array(
                (String(repeating: #"{"a":"#, count: JSONValue.maximumNestingDepth + 1) + "1"
                    + String(repeating: "}", count: JSONValue.maximumNestingDepth + 1)).utf8),
        ]

    @Test("what the full parser refuses is never plain")
    func invalid() {
        for bytes in Self.invalidBodies {
            #expect(!DocumentBody.isPlain(bytes), "\(String(decoding: bytes, as: UTF8.self))")
            #expect(throws: JSONParseError.self) { try JSONValue(parsing: bytes) }
        }
    }

    @Test("a JSON text that is not an object is never plain", arguments: [#"[1,2]"#, #""a""#, "1", "null"])
    func notAnObject(text: String) throws {
        #expect(!isPlain(text))
        _ = try JSONValue(parsing: text)
    }

    @Test("the deepest nesting the parser allows is still plain")
    func deepestNesting() {
        let depth = JSONValue.maximumNestingDepth
        let text = String(repeating: #"{"a":"#, count: depth - 1) + "{}" + String(repeating: "}", count: depth - 1)
        #expect(isPlain(text))
        #expect(isPlainByFullParse(Array(text.utf8)))
    }

    @Test("keys that could hide a duplicate or a _ are left to the full parse")
    func conservativeKeys() {
        #expect(!isPlain(#"{"\u005fid":1}"#))
        #expect(!isPlain(#"{"\u0061":1,"a":2}"#))
        // Canonically equivalent keys, which Swift's String treats as the same key.
        #expect(!isPlain("{\"caf\u{E9}\":1,\"cafe\u{301}\":2}"))
        let wide = (0...JSONBodyScan.maximumPlainObjectWidth).map { "\"k\($0)\":\($0)" }.joined(separator: ",")
        #expect(!isPlain("{\(wide)}"))
        #expect(isPlainByFullParse(Array("{\(wide)}".utf8)))
    }

    @Test("mutated documents: whenever the scan says plain, the full parse agrees")
    func mutationsAreSound() {
        var state: UInt64 = 0x5EED
        func next(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int(state >> 33) % bound
        }
        let seeds = (Self.plainBodies + Self.valuableBodies).map { Array($0.utf8) }
        let replacements = Array(#"{}[]",:\_@u0aeE-+.tfn "#.utf8) + [0x00, 0x1F, 0x80, 0xC3, 0xE9, 0xED, 0xFF]
        var plainCount = 0
        for _ in 0..<20_000 {
            var bytes = seeds[next(seeds.count)]
            for _ in 0...next(3) {
                guard !bytes.isEmpty else { break }
                let position = next(bytes.count)
                switch next(3) {
                case 0: bytes[position] = replacements[next(replacements.count)]
                case 1: bytes.remove(at: position)
                default: bytes.insert(replacements[next(replacements.count)], at: position)
                }
            }
            if DocumentBody.isPlain(bytes) {
                plainCount += 1
                #expect(isPlainByFullParse(bytes), "\(String(decoding: bytes, as: UTF8.self))")
            }
        }
        // The mutations must leave a fair share plain, or the check above proves nothing.
        #expect(plainCount > 1_000)
    }
}
