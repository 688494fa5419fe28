import EdgeGatewayTestSupport
import Testing

@testable import SyncJSON

@Suite struct JSONDeltaTests {
    @Test func specExample() throws {
        let old = try json(#"{"age":8,"grade":3,"name":{"first":"Bob","last":"Lee"}}"#)
        let new = try json(#"{"age":9,"name":{"first":"Rob","last":"Lee"}}"#)
        let delta = try json(#"{"age":9,"grade":[],"name":{"first":"Rob"}}"#)
        #expect(try JSONDelta.apply(delta: delta, to: old) == new)
        #expect(JSONDelta.makeDelta(from: old, to: new).jsonString == delta.jsonString)
    }

    @Test func fixtureDeltaInsertsMembers() throws {
        let base = bytes(#"{"index":0,"payload":"xobp","type":"cblpeer-test"}"#)
        let delta = try json(#"{"update_count":1,"updated_by":"clientA"}"#)
        let result = try JSONDelta.apply(delta: delta, to: JSONValue(parsing: base)).serialized
        #expect(
            result
                == bytes(#"{"index":0,"payload":"xobp","type":"cblpeer-test","update_count":1,"updated_by":"clientA"}"#)
        )
        let made = JSONDelta.makeDelta(from: try JSONValue(parsing: base), to: try JSONValue(parsing: result))
        #expect(made.jsonString == delta.jsonString)
    }

    @Test func replacementForms() throws {
        #expect(try JSONDelta.apply(delta: json("[[1,2]]"), to: json(#"{"a":1}"#)) == json("[1,2]"))
        #expect(try JSONDelta.apply(delta: json(#"{"a":[{"x":1}]}"#), to: json(#"{"a":5}"#)) == json(#"{"a":{"x":1}}"#))
        #expect(try JSONDelta.apply(delta: json("7"), to: json(#""s""#)) == 7)
        #expect(try JSONDelta.apply(delta: json("{}"), to: json(#"{"a":1}"#)) == json(#"{"a":1}"#))
        #expect(try JSONDelta.makeDelta(from: json(#"{"a":1}"#), to: json(#"{"a":1}"#)) == [:])
        #expect(JSONDelta.makeDelta(from: 1, to: [1]).jsonString == "[[1]]")
    }

    @Test func arrayIndexAndTailKeys() throws {
        let old = try json("[1,2,3,4]")
        #expect(try JSONDelta.apply(delta: json(#"{"1":20,"3-":[40,50]}"#), to: old) == json("[1,20,3,40,50]"))
        #expect(try JSONDelta.apply(delta: json(#"{"2-":[]}"#), to: old) == json("[1,2]"))
        #expect(try JSONDelta.apply(delta: json(#"{"4-":[5]}"#), to: old) == json("[1,2,3,4,5]"))
        let longOld = try json(#"[{"k":"aaaaaaaaaaaaaaaa","v":1},{"k":"bbbbbbbbbbbbbbbbbbb"},3,4,5,6,7,8,9]"#)
        let longNew = try json(#"[{"k":"aaaaaaaaaaaaaaaa","v":2},{"k":"bbbbbbbbbbbbbbbbbbb"},3,4,5,6,7,8,9,10]"#)
        let delta = JSONDelta.makeDelta(from: longOld, to: longNew)
        #expect(delta.jsonString == #"{"0":{"v":2},"9-":[10]}"#)
        #expect(try JSONDelta.apply(delta: delta, to: longOld) == longNew)
    }

    @Test func textPatches() throws {
        // Fleece's Deltas.md shows this example with `31=`, but the old string has only 30 bytes after
        // "The f"; the counts must consume it exactly (spec §6), so the consistent patch is `30=`.
        let patched = try JSONDelta.apply(
            delta: json(#"["4=1-1+d|30=",0,2]"#), to: json(#""The fog comes in on little cat feet""#))
        #expect(patched == .string("The dog comes in on little cat feet"))
        let old = JSONValue.string(String(repeating: "é lorem ipsum ", count: 6))
        let new = JSONValue.string(
            String(repeating: "é lorem ipsum ", count: 3) + "ü" + String(repeating: "é lorem ipsum ", count: 3))
        let delta = JSONDelta.makeDelta(from: old, to: new)
        #expect(delta.arrayValue?.count == 3)
        #expect(try JSONDelta.apply(delta: delta, to: old) == new)
    }

    @Test(arguments: [
        (#"{"a":1}"#, "[1,2]", "unrecognized array delta of 2 items at ''"),
        ("[1]", #"{"x":1}"#, "invalid array index 'x' at '' for 1 elements"),
        ("[1]", #"{"0":[]}"#, "array element '/0' cannot be deleted by index"),
        ("[1]", #"{"3-":[1]}"#, "invalid array tail '3-' at '' for 1 elements"),
        ("5", #"{"a":1}"#, "object delta at '' applied to a number"),
        (#""abc""#, #"["5=",0,2]"#, "text patch at '': runs past the end of the old string"),
        (#""abc""#, #"["1=",0,2]"#, "text patch at '': does not consume the whole old string"),
        (#""abc""#, #"["3=2+x|",0,2]"#, "text patch at '': insertion is not followed by '|'"),
        ("5", #"["1=",0,2]"#, "text patch at '' needs a string patch and a string base"),
        (#"{"a":1}"#, "[]", "the delta deletes the whole value"),
    ])
    func corruptDeltas(base: String, delta: String, reason: String) throws {
        #expect(throws: JSONDeltaError.corruptDelta(reason)) {
            _ = try JSONDelta.apply(delta: json(delta), to: json(base))
        }
    }

    @Test func makeDeltaRoundTripsOnRandomDocuments() throws {
        var generator = SplitMix64(seed: 0x5EED)
        for _ in 0..<300 {
            let old = randomValue(depth: 0, using: &generator)
            var new = mutate(old, using: &generator)
            if Bool.random(using: &generator) { new = mutate(new, using: &generator) }
            let delta = JSONDelta.makeDelta(from: old, to: new)
            // The delta travels as bytes, so it must survive serialization too.
            let sent = try JSONValue(parsing: delta.serialized)
            #expect(try JSONDelta.apply(delta: sent, to: old) == new, "old \(old) new \(new) delta \(delta)")
        }
    }

    @Test func deltaPolicy() {
        #expect(
            DeltaPolicy.shouldSendDelta(
                deltaSize: 41, bodySize: 20_211, baseIsTombstone: false, receiverAcceptsDeltas: true))
        // Small bodies (about 165 bytes in the transcripts) always went in full.
        #expect(
            !DeltaPolicy.shouldSendDelta(
                deltaSize: 20, bodySize: 165, baseIsTombstone: false, receiverAcceptsDeltas: true))
        #expect(
            !DeltaPolicy.shouldSendDelta(
                deltaSize: 41, bodySize: 20_211, baseIsTombstone: true, receiverAcceptsDeltas: true))
        #expect(
            !DeltaPolicy.shouldSendDelta(
                deltaSize: 41, bodySize: 20_211, baseIsTombstone: false, receiverAcceptsDeltas: false))
        #expect(
            DeltaPolicy.shouldSendDelta(
                deltaSize: 240, bodySize: 200, baseIsTombstone: false, receiverAcceptsDeltas: true))
        #expect(
            !DeltaPolicy.shouldSendDelta(
                deltaSize: 241, bodySize: 200, baseIsTombstone: false, receiverAcceptsDeltas: true))
    }
}

private let words = ["a", "b", "name", "list", "x~/y", "é", "long"]

private func randomScalar(using generator: inout SplitMix64) -> JSONValue {
    switch Int.random(in: 0..<6, using: &generator) {
    case 0: return .null
    case 1: return .bool(Bool.random(using: &generator))
    case 2: return .integer(Int.random(in: -1000...1000, using: &generator))
    case 3: return .number(JSONNumber(Double(Int.random(in: 0...1000, using: &generator)) / 8))
    case 4: return .string(words.randomElement(using: &generator)!)
    default:
        let repeats = Int.random(in: 10...30, using: &generator)
        return .string(String(repeating: words.randomElement(using: &generator)! + " text ", count: repeats))
    }
}

private func randomValue(depth: Int, using generator: inout SplitMix64) -> JSONValue {
    guard depth < 4, Int.random(in: 0..<3, using: &generator) > 0 else { return randomScalar(using: &generator) }
    if Bool.random(using: &generator) {
        return .array(
            (0..<Int.random(in: 0...5, using: &generator)).map { _ in randomValue(depth: depth + 1, using: &generator) }
        )
    }
    var object = JSONObject()
    for _ in 0..<Int.random(in: 0...5, using: &generator) {
        object[words.randomElement(using: &generator)!] = randomValue(depth: depth + 1, using: &generator)
    }
    return .object(object)
}

/// A random edit somewhere in the value: replace, insert, delete, append, truncate or edit text.
private func mutate(_ value: JSONValue, using generator: inout SplitMix64) -> JSONValue {
    switch value {
    case .object(var object):
        let key = words.randomElement(using: &generator)!
        switch Int.random(in: 0..<4, using: &generator) {
        case 0: object[key] = nil
        case 1: object[key] = randomValue(depth: 2, using: &generator)
        default:
            if let existing = object[key] { object[key] = mutate(existing, using: &generator) } else { object[key] = 1 }
        }
        return .object(object)
    case .array(var array):
        switch Int.random(in: 0..<4, using: &generator) {
        case 0 where !array.isEmpty: array.removeLast(Int.random(in: 1...array.count, using: &generator))
        case 1: array.append(randomValue(depth: 3, using: &generator))
        default:
            if let index = array.indices.randomElement(using: &generator) {
                array[index] = mutate(array[index], using: &generator)
            } else {
                array = [randomScalar(using: &generator)]
            }
        }
        return .array(array)
    case .string(let string) where string.utf8.count >= JSONDelta.minimumTextPatchLength:
        var characters = Array(string)
        let index = Int.random(in: 0..<characters.count, using: &generator)
        characters.replaceSubrange(index..<min(index + 3, characters.count), with: Array("ü✓"))
        return .string(String(characters))
    default:
        return randomValue(depth: 3, using: &generator)
    }
}
