import BLIPCodec
import Crypto
import EdgeGatewayTestSupport
import Foundation
import Synchronization

/// One request for the passive side's handlers, as the fuzzer sends it.
struct HandlerFuzzInput: Sendable {
    /// Profile and mutation, for the tallies and for naming a failing input.
    var label: String
    var message: BLIPMessage
    /// Sent twice in a row (duplicate messages); each copy is an input of its own.
    var isDuplicated = false
    /// The revision this input pushes unmutated: recorded as acknowledged when the gateway answers success.
    var pushed: PushedRevision?

    struct PushedRevision: Sendable, Hashable {
        var docID: String
        var revID: String
        var deleted: Bool
        /// The exact body the store must keep, when it keeps the bytes as sent (a plain, non-delta body).
        var storedBody: [UInt8]?
    }

    /// Properties and body in a line, cut short, for failure reports.
    var summary: String {
        let properties = message.properties.pairs.map { "\($0.key)=\($0.value.prefix(60))" }.joined(separator: " ")
        let body = String(decoding: message.body.prefix(160), as: UTF8.self)
        return "\(label) [\(properties)] noReply=\(message.isNoReply) body(\(message.body.count))=\(body)"
    }
}

/// The blobs the fuzzing client serves when the gateway asks with `getAttachment`, by digest. A digest may map to
/// bytes that do not hash to it (a client lying about its blob).
final class ClientBlobTable: Sendable {
    private let blobs = Mutex<[String: [UInt8]]>([:])

    func serve(_ bytes: [UInt8], as digest: String) {
        blobs.withLock { $0[digest] = bytes }
    }

    func bytes(for digest: String) -> [UInt8]? {
        blobs.withLock { $0[digest] }
    }

    static func digest(of bytes: [UInt8]) -> String {
        "sha1-" + Data(Insecure.SHA1.hash(data: bytes)).base64EncodedString()
    }
}

/// Seeded generator of valid replication requests, mutated: one per worker, so that its inputs depend only on its
/// seed, not on how the workers interleave.
struct HandlerFuzzInputs {
    /// Requests recorded from Couchbase Lite 3.2.4 and 4.0.3 (the fixture transcripts), sent as they are or mutated.
    let recorded: [BLIPMessage]
    let blobs: ClientBlobTable
    /// The `collection` property every collection-specific message carries; `nil` in legacy mode.
    let collection: Int?
    /// Prefix of the document IDs this worker owns; it also touches a few shared ones.
    let prefix: String
    var generator: SplitMix64
    /// What this worker believes the gateway has: each document's revisions, newest first, and its body.
    var documents: [String: (revisions: [String], body: [UInt8])] = [:]
    /// Documents proposed but not sent yet, as (docID, revID, parent).
    var proposed: [(docID: String, revID: String, parent: String?)] = []
    var checkpoints: [String: String] = [:]
    var storedDigests: [String] = []
    var counter = 0

    init(recorded: [BLIPMessage], blobs: ClientBlobTable, collection: Int?, prefix: String, seed: UInt64) {
        self.recorded = recorded
        self.blobs = blobs
        self.collection = collection
        self.prefix = prefix
        // SplitMix64 streams whose seeds differ by a multiple of its increment are one stream shifted, so the
        // seed is mixed first.
        var mixer = SplitMix64(seed: seed)
        self.generator = SplitMix64(seed: mixer.next())
    }

    mutating func chance(_ percent: Int) -> Bool { Int.random(in: 0..<100, using: &generator) < percent }
    mutating func number(_ range: Range<Int>) -> Int { Int.random(in: range, using: &generator) }
    mutating func pick<T>(_ items: [T]) -> T { items.randomElement(using: &generator)! }

    mutating func hexDigest() -> String {
        (0..<5).map { _ in
            let hex = String(UInt32(truncatingIfNeeded: generator.next()), radix: 16)
            return String(repeating: "0", count: 8 - hex.count) + hex
        }.joined()
    }

    mutating func next() -> HandlerFuzzInput {
        counter += 1
        var input = valid()
        if chance(75) {
            for _ in 0..<(chance(70) ? 1 : number(2..<4)) {
                mutate(&input)
            }
        }
        if chance(3) {
            input.isDuplicated = true
            input.label += "+duplicate"
        }
        if chance(3) {
            input.message.isNoReply = true
            input.label += "+noReply"
        }
        input.message.isUrgent = chance(20)
        input.message.isCompressed = chance(15)
        if input.label.contains("+") {
            // Mutated: what the gateway acknowledges may differ from what was meant.
            input.pushed = nil
        }
        return input
    }

    // MARK: - Valid requests

    private mutating func valid() -> HandlerFuzzInput {
        switch number(0..<100) {
        case 0..<8: return recordedRequest()
        case 8..<16: return getCheckpoint()
        case 16..<26: return setCheckpoint()
        case 26..<32: return subChanges()
        case 32..<34: return request("unsubChanges", [:])
        case 34..<46: return proposeChanges()
        case 46..<50: return changes()
        case 50..<82: return rev()
        case 82..<88: return getAttachment()
        case 88..<93: return proveAttachment()
        case 93..<95: return getCollections()
        case 95..<97: return request("norev", ["id": documentID(), "rev": "1-" + hexDigest(), "error": "404"])
        default: return request(pick(["getDocs", "revs", "", "Profile", "subChanges "]), [:])
        }
    }

    private func request(
        _ profile: String, _ properties: [String: String], body: [UInt8] = [], label: String? = nil
    ) -> HandlerFuzzInput {
        var pairs = properties.sorted { $0.key < $1.key }.map { (key: $0.key, value: $0.value) }
        if let collection, profile != "getCollections" {
            pairs.append((key: "collection", value: String(collection)))
        }
        return HandlerFuzzInput(
            label: label ?? "\(profile)/valid",
            message: .request(profile: profile, properties: BLIPProperties(pairs), body: body))
    }

    private mutating func recordedRequest() -> HandlerFuzzInput {
        var message = pick(recorded)
        if let collection, message.profile != "getCollections", message.properties["collection"] == nil {
            message.properties["collection"] = String(collection)
        }
        return HandlerFuzzInput(label: "\(message.profile ?? "")/recorded", message: message)
    }

    private mutating func documentID() -> String {
        if chance(15) { return "shared-\(number(0..<8))" }
        if !documents.isEmpty, chance(60) { return pick(Array(documents.keys)) }
        return "\(prefix)-\(counter)"
    }

    private mutating func clientID() -> String { "cp-\(prefix)-\(number(0..<4))" }

    private mutating func getCheckpoint() -> HandlerFuzzInput {
        request("getCheckpoint", ["client": clientID()])
    }

    private mutating func setCheckpoint() -> HandlerFuzzInput {
        let client = clientID()
        var properties = ["client": client]
        if let revision = checkpoints[client] {
            properties["rev"] = revision
        }
        // The gateway numbers checkpoint revisions 1-cc, 2-cc, …: this worker expects the next one.
        let generation = (checkpoints[client].flatMap { Int($0.prefix { $0 != "-" }) } ?? 0) + 1
        checkpoints[client] = "\(generation)-cc"
        return request(
            "setCheckpoint", properties, body: Array(#"{"local":\#(counter),"remote":\#(number(0..<1000))}"#.utf8))
    }

    private mutating func subChanges() -> HandlerFuzzInput {
        var properties: [String: String] = [:]
        if chance(80) { properties["since"] = chance(70) ? String(number(0..<500)) : "\"\(number(0..<500))\"" }
        if chance(20) { properties["continuous"] = "true" }
        if chance(70) { properties["batch"] = String(number(1..<300)) }
        if chance(50) { properties["sendReplacementRevs"] = "1" }
        if chance(50) { properties["versioning"] = "rev-trees" }
        if chance(30) { properties["activeOnly"] = "true" }
        var body: [UInt8] = []
        if chance(20) {
            let ids = (0..<number(1..<4)).map { _ in "\"\(documentID())\"" }.joined(separator: ",")
            body = Array(#"{"docIDs":[\#(ids)]}"#.utf8)
        }
        return request("subChanges", properties, body: body)
    }

    private mutating func proposeChanges() -> HandlerFuzzInput {
        var rows: [String] = []
        for _ in 0..<number(1..<6) {
            let docID = documentID()
            let current = documents[docID]?.revisions.first
            let generation = (current.flatMap { Int($0.prefix { $0 != "-" }) } ?? 0) + 1
            let revID = "\(generation)-\(hexDigest())"
            proposed.append((docID, revID, current))
            let parent = current.map { ",\"\($0)\"" } ?? ""
            rows.append(#"["\#(docID)","\#(revID)"\#(parent),\#(number(1..<200))]"#)
        }
        if proposed.count > 64 { proposed.removeFirst(proposed.count - 64) }
        let properties = chance(50) ? ["conflictIncludesRev": "true"] : [:]
        return request("proposeChanges", properties, body: Array("[\(rows.joined(separator: ","))]".utf8))
    }

    private mutating func changes() -> HandlerFuzzInput {
        var rows: [String] = []
        for _ in 0..<number(0..<5) {
            let docID = documentID()
            let revID = documents[docID]?.revisions.first ?? "1-\(hexDigest())"
            rows.append(#"[\#(number(1..<10_000)),"\#(docID)","\#(revID)",\#(chance(10) ? 1 : 0),\#(number(1..<300))]"#)
        }
        return request("changes", [:], body: Array("[\(rows.joined(separator: ","))]".utf8))
    }

    /// A document body; with a blob (served correctly by this client unless `lyingBlob`) one time in five.
    private mutating func documentBody(lyingBlob: Bool) -> (body: [UInt8], isPlain: Bool) {
        var fields = [#""n":\#(counter)"#, #""text":"\#(prefix) \#(number(0..<1_000_000))""#]
        if chance(30) { fields.append(#""nested":{"a":[1,2,{"b":null}],"c":true}"#) }
        if chance(5) { fields.append(#""long":"\#(String(repeating: "z", count: number(1_000..<20_000)))""#) }
        var isPlain = true
        if chance(20) || lyingBlob {
            let bytes = (0..<number(1..<4_096)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let digest = ClientBlobTable.digest(of: bytes)
            if lyingBlob {
                var other = bytes
                other[number(0..<other.count)] ^= 0x5A
                blobs.serve(chance(50) ? other : Array(other.prefix(other.count / 2)), as: digest)
            } else {
                blobs.serve(bytes, as: digest)
                storedDigests.append(digest)
                if storedDigests.count > 64 { storedDigests.removeFirst() }
            }
            fields.append(
                #""file":{"@type":"blob","digest":"\#(digest)","length":\#(bytes.count),"content_type":"application/octet-stream"}"#
            )
            isPlain = false
        }
        return (Array("{\(fields.joined(separator: ","))}".utf8), isPlain)
    }

    private mutating func rev() -> HandlerFuzzInput {
        if !proposed.isEmpty, chance(60) {
            let proposal = proposed.removeFirst()
            let ancestors = Array(documents[proposal.docID]?.revisions.dropFirst() ?? [])
            let parents = proposal.parent.map { [$0] + ancestors } ?? []
            return revision(docID: proposal.docID, revID: proposal.revID, parents: parents)
        }
        let docID = documentID()
        let parentRevisions = documents[docID]?.revisions ?? []
        let generation = (parentRevisions.first.flatMap { Int($0.prefix { $0 != "-" }) } ?? 0) + 1
        return revision(docID: docID, revID: "\(generation)-\(hexDigest())", parents: parentRevisions)
    }

    private mutating func revision(docID: String, revID: String, parents: [String]) -> HandlerFuzzInput {
        var properties = ["id": docID, "rev": revID]
        if !parents.isEmpty { properties["history"] = parents.prefix(number(1..<25)).joined(separator: ",") }
        if chance(60) { properties["sequence"] = String(number(1..<100_000)) }
        if chance(10) { properties["noconflicts"] = "true" }
        let kind = number(0..<100)
        var label = "rev/valid"
        var body: [UInt8]
        var storedBody: [UInt8]?
        var deleted = false
        if kind < 8 {
            deleted = true
            properties["deleted"] = "1"
            body = chance(50) ? [] : Array("{}".utf8)
            label = "rev/deletion"
        } else if kind < 18, let base = parents.first {
            properties["deltaSrc"] = base
            body = Array(#"{"n":\#(counter),"text":["1=2-1+x|",0,2]}"#.utf8)
            label = "rev/delta"
        } else if kind < 23 {
            body = documentBody(lyingBlob: true).body
            label = "rev/blobWithWrongBytes"
        } else {
            let made = documentBody(lyingBlob: false)
            body = made.body
            if made.isPlain { storedBody = body }
        }
        let keptBody = deleted ? Array("{}".utf8) : body
        documents[docID] = ([revID] + Array(parents.prefix(30)), keptBody)
        if documents.count > 200, let victim = documents.keys.first { documents[victim] = nil }
        var input = request("rev", properties, body: body, label: label)
        if label == "rev/valid" || label == "rev/deletion" {
            input.pushed = .init(docID: docID, revID: revID, deleted: deleted, storedBody: deleted ? nil : storedBody)
        }
        return input
    }

    private mutating func getAttachment() -> HandlerFuzzInput {
        let digest = storedDigests.isEmpty ? ClientBlobTable.digest(of: [UInt8(number(0..<256))]) : pick(storedDigests)
        var properties = ["digest": digest]
        if chance(70) { properties["docID"] = documentID() }
        if chance(50) { properties["compress"] = "true" }
        return request("getAttachment", properties)
    }

    private mutating func proveAttachment() -> HandlerFuzzInput {
        let digest = storedDigests.isEmpty ? ClientBlobTable.digest(of: [7]) : pick(storedDigests)
        let nonce = (0..<pick([16, 20, 0, 1, 255, 4_096])).map { _ in UInt8.random(in: 0...255, using: &generator) }
        return request("proveAttachment", ["digest": digest], body: nonce)
    }

    private mutating func getCollections() -> HandlerFuzzInput {
        request(
            "getCollections", [:],
            body: Array(#"{"collections":["_default._default","s.c"],"checkpoint_ids":["cp-a","cp-b"]}"#.utf8))
    }

    // MARK: - Mutations

    static let hostileValues: [String] = [
        "", "0", "-1", "-9223372036854775808", "9223372036854775807", "9223372036854775808",
        "18446744073709551616", "99999999999999999999999999999", "-99999999999999999999", "1.5", "1e308", "1e400",
        "-0", "NaN", "Infinity", "true", "false", "null", "[]", "{}", "[1,2]", "\"x\"", "\"-5\"", "abc", " 1", "1 ",
        "0x10", "\u{0}", "é\u{301}", "\u{FFFD}", "../../etc/passwd", "/", "sha1-", "sha1-AAAA", "sha1-!!!!",
        "sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=", "1-", "0-a", "-1-a", "1--a", "4294967295-a",
        "4294967296-a", "1-a,1-a", "2-b,1-a", "1-a,2-b", "3-c,1-a", ",", ",,", "1-\u{0}", "1-é",
        String(repeating: "9", count: 400), String(repeating: "a", count: 5_000), "2147483648", "4294967296",
        "-2147483649", "1,2", "rev-trees", "version-vectors", "0-1", "0-999999999999999999999",
        "cp-\u{0}", String(repeating: "1-a,", count: 300),
    ]

    /// BLIP properties are NUL-separated on the wire, so no sender can put a NUL into one (the BLIP frame fuzz
    /// target covers malformed property blocks).
    static let propertyValues = hostileValues.filter { !$0.contains("\u{0}") }

    static let knownKeys = [
        "id", "rev", "history", "sequence", "deleted", "noconflicts", "deltaSrc", "replacedRev", "error",
        "collection", "client", "since", "continuous", "batch", "versioning", "activeOnly", "filter", "channels",
        "sendReplacementRevs", "digest", "docID", "compress", "conflictIncludesRev", "revocations", "Profile",
        "maxHistory", "blobs", "deltas",
    ]

    static let hostileBodies: [String] = [
        "", "{", "}", "[", "]", "null", "true", "0", "-1", "1e999", "\"x\"", "[]", "{}", "[[]]", "[{}]", "[null]",
        "[0]", "[[0]]", #"[["a"]]"#, #"[["a","1-a"]]"#, #"[["a","garbage",null,-1]]"#, #"[[1,"d","1-a",1,1]]"#,
        #"[[-1,"d","1-a"]]"#, #"[[1e400,"d","1-a"]]"#, #"[[99999999999999999999,"d","1-a"]]"#, #"[["",""]]"#,
        #"{"a":1,"a":2}"#, #"{"_id":"x"}"#, #"{"_rev":"1-a"}"#, #"{"_deleted":true}"#, #"{"_attachments":5}"#,
        #"{"_attachments":{"f":{"digest":"sha1-AAAA","revpos":-1}}}"#,
        #"{"_attachments":{"f":{"stub":true,"digest":"sha1-l/HKHdoEFa1TqxpJsA2C1/FQ0Z4=","length":-5}}}"#,
        #"{"f":{"@type":"blob","digest":"sha1-l/HKHdoEFa1TqxpJsA2C1/FQ0Z4=","length":99999999999999999999}}"#,
        #"{"f":{"@type":"blob","digest":5}}"#, #"{"f":{"@type":"blob"}}"#, #"{"f":{"@type":"blob","digest":"md5-x"}}"#,
        #"{"docIDs":5}"#, #"{"docIDs":[1,null]}"#, #"{"docIDs":[""]}"#, #"{"local":1e999}"#,
        #"{"collections":[],"checkpoint_ids":[]}"#, #"{"collections":["a"],"checkpoint_ids":[]}"#,
        #"{"collections":[5],"checkpoint_ids":[null]}"#, #"{"text":["99999999999999999999=",0,2]}"#,
        #"{"text":["-1=",0,2]}"#, #"{"text":["5+abc",0,2]}"#, #"{"text":["1=1-1+",0,2]}"#, #"{"n":[]}"#,
        #"{"n":[1,2]}"#, #"{"a":{"5-":[1]}}"#, #"{"a":{"99999999999999999999":1}}"#, "\u{FEFF}{}", "{\"\u{0}\":1}",
        #"{"s":"\ud800"}"#, #"{"s":"\u0000"}"#, "[1,2,3,", #"{"a":}"#, "{\"a\":1}garbage", "\u{0}\u{1}\u{2}",
    ]

    /// Deltas that cannot apply to the base they name, or that name impossible operations (spec §6).
    static let hostileDeltas: [String] = [
        #"{"text":["99999999999999999999=",0,2]}"#, #"{"text":["-1=",0,2]}"#, #"{"text":["5=",0,2]}"#,
        #"{"text":["1=1-1+",0,2]}"#, #"{"text":["2+ab|3=",0,2]}"#, #"{"text":["100-",0,2]}"#, #"{"text":["=",0,2]}"#,
        #"{"text":["1=1=1=1=1=1=1=1=1=1=1=",0,2]}"#, #"{"text":["4294967296+x|",0,2]}"#, #"{"text":["",0,2]}"#,
        #"{"text":[1,0,2]}"#, #"{"text":["1=",1,2]}"#, #"{"text":["1=",0,3]}"#, #"{"text":["1=",0]}"#,
        #"{"n":{"5-":[1]}}"#, #"{"n":{"0":1}}"#, #"{"nested":{"a":{"99999999999999999999":1}}}"#,
        #"{"nested":{"a":{"-1":1}}}"#, #"{"nested":{"a":{"3-":[]}}}"#, #"{"nested":{"a":{"9-":[1]}}}"#,
        #"{"nested":{"a":{"1-":5}}}"#, #"{"nested":{"a":{"x":1}}}"#, #"{"nested":{"c":{"a":1}}}"#, #"{"text":[]}"#,
        #"{"missing":[]}"#, "[]", "[1]", "[[1]]", "5", "\"s\"", "null", #"{"_id":"x"}"#, #"{"_deleted":true}"#,
        #"{"_attachments":{"f":{"stub":true}}}"#, #"{"file":{"digest":"sha1-AAAA"}}"#,
        #"{"file":{"@type":"blob","digest":"sha1-l/HKHdoEFa1TqxpJsA2C1/FQ0Z4=","length":5}}"#,
        String(repeating: #"{"a":"#, count: 5_000) + "1" + String(repeating: "}", count: 5_000),
    ]

    private mutating func mutate(_ input: inout HandlerFuzzInput) {
        var pairs = input.message.properties.pairs
        var body = input.message.body
        let mutation: String
        switch number(0..<19) {
        case let choice where choice < 3 && pairs.count > 1:
            let index = number(1..<pairs.count)
            if choice == 0 {
                mutation = "drop-\(pairs[index].key)"
                pairs.remove(at: index)
            } else {
                mutation = "hostile-\(pairs[index].key)"
                pairs[index].value = pick(Self.propertyValues)
            }
        case 3:
            let key = pick(Self.knownKeys)
            mutation = "add-\(key)"
            let value = pick(Self.propertyValues)
            if let index = pairs.firstIndex(where: { $0.key == key }) {
                pairs[index].value = value
            } else {
                pairs.append((key: key, value: value))
            }
        case 4:
            let key = pick(Self.knownKeys)
            mutation = "duplicate-\(key)"
            pairs.append((key: key, value: pick(Self.propertyValues)))
        case 5:
            mutation = "profile"
            pairs[0].value = pick([
                "rev", "changes", "proposeChanges", "subChanges", "getCheckpoint", "setCheckpoint", "getAttachment",
                "proveAttachment", "unsubChanges", "getCollections", "norev",
            ])
        case 6:
            mutation = "emptyBody"
            body = []
        case 7:
            mutation = "hostileBody"
            body = Array(pick(Self.hostileBodies).utf8)
        case 8 where !body.isEmpty:
            mutation = "truncate"
            body = Array(body.prefix(number(0..<body.count)))
        case 9 where !body.isEmpty:
            mutation = "flipBytes"
            for _ in 0..<number(1..<4) {
                body[number(0..<body.count)] ^= UInt8(1 << number(0..<8))
            }
        case 10:
            mutation = "deepNesting"
            let depth = pick([100, 1_000, 10_000, 100_000])
            body = Array(repeating: UInt8(ascii: "["), count: depth) + Array(repeating: UInt8(ascii: "]"), count: depth)
        case 11:
            mutation = "hugeNumbers"
            body = Self.replacingNumbers(
                in: body, with: pick(["99999999999999999999999", "-1", "1e400", "-9223372036854775809", "0.5"]))
        case 12:
            mutation = "badRevisionIDs"
            let bad = pick(["1-", "0-a", "x", "-3-b", "4294967296-a", "1-a-b", ""])
            body = Self.replacingRevisionIDs(in: body, with: bad)
            for index in pairs.indices where ["rev", "history", "deltaSrc", "replacedRev"].contains(pairs[index].key) {
                pairs[index].value = bad
            }
        case 13:
            mutation = "disconnectedHistory"
            if let index = pairs.firstIndex(where: { $0.key == "rev" }) {
                let top = "\(number(5..<50))-\(hexDigest())"
                pairs[index].value = top
                pairs.removeAll { $0.key == "history" }
                pairs.append(
                    (key: "history", value: pick(["1-\(hexDigest())", "\(number(50..<90))-aa,1-bb", top, "2-a,2-b"])))
            } else {
                pairs.append((key: "since", value: String(Int64.max)))
            }
        case 14:
            mutation = "longHistory"
            let top = number(2..<1_000)
            pairs.removeAll { $0.key == "rev" || $0.key == "history" }
            pairs.append((key: "rev", value: "\(top)-\(hexDigest())"))
            let depth = min(top - 1, number(1..<1_000))
            pairs.append((key: "history", value: (0..<depth).map { "\(top - 1 - $0)-a\($0)" }.joined(separator: ",")))
        case 15:
            mutation = "hostileDelta"
            if !pairs.contains(where: { $0.key == "deltaSrc" }) {
                let base = pairs.first { $0.key == "history" }?.value.split(separator: ",").first.map(String.init)
                pairs.append((key: "deltaSrc", value: base ?? "1-\(hexDigest())"))
            }
            body = Array(pick(Self.hostileDeltas).utf8)
        case 16:
            mutation = "manyRows"
            let rows = number(100..<1_000)
            let profile = pairs[0].value
            body = Array(
                ("["
                    + (0..<rows).map { row in
                        profile == "changes"
                            ? #"[\#(row),"many-\#(row % 50)","\#(row % 9 + 1)-\#(row)",0,\#(row)]"#
                            : #"["many-\#(row % 50)","\#(row % 9 + 1)-\#(row)"]"#
                    }.joined(separator: ",") + "]").utf8)
        case 17:
            mutation = "manyDocIDs"
            body = Array(
                (#"{"docIDs":["# + (0..<number(100..<2_000)).map { #""d\#($0)""# }.joined(separator: ",") + "]}").utf8)
        default:
            mutation = "emptyProperties"
            pairs = [pairs[0]]
        }
        input.message.properties = BLIPProperties(pairs)
        input.message.body = body
        input.label += "+" + mutation
    }

    /// `body` with every rev-tree revision ID (`<digits>-<40 lowercase hex digits>`) replaced by `replacement`.
    static func replacingRevisionIDs(in body: [UInt8], with replacement: String) -> [UInt8] {
        func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }
        func isHex(_ byte: UInt8) -> Bool { isDigit(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte) }
        var result: [UInt8] = []
        var index = 0
        while index < body.count {
            var end = index
            while end < body.count, isDigit(body[end]) { end += 1 }
            if end > index, end + 41 <= body.count, body[end] == UInt8(ascii: "-"),
                body[(end + 1)..<(end + 41)].allSatisfy(isHex)
            {
                result += Array(replacement.utf8)
                index = end + 41
            } else {
                result.append(body[index])
                index += 1
            }
        }
        return result
    }

    /// `body` with every JSON number token replaced by `replacement`.
    static func replacingNumbers(in body: [UInt8], with replacement: String) -> [UInt8] {
        var result: [UInt8] = []
        var inString = false
        var escaped = false
        var index = 0
        while index < body.count {
            let byte = body[index]
            if inString {
                result.append(byte)
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                }
                index += 1
            } else if byte == UInt8(ascii: "\"") {
                inString = true
                result.append(byte)
                index += 1
            } else if byte == UInt8(ascii: "-") || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) {
                while index < body.count, "-+.eE0123456789".utf8.contains(body[index]) { index += 1 }
                result += Array(replacement.utf8)
            } else {
                result.append(byte)
                index += 1
            }
        }
        return result
    }
}
