import BLIPCodec
import BLIPConnection
import EdgeConfig
import EdgeGatewayTestSupport
import Foundation
import ReplicationProtocol
import SyncListener
import Testing

/// Every kind of bad input the listener is known to meet, sent for real over loopback: malformed HTTP, refused
/// upgrades, WebSocket and BLIP framing errors. Each one must get its precise answer (an HTTP status, a
/// WebSocket close code) and a log line where the listener writes one, while a client connected throughout
/// keeps replicating. The printed rows are the table in RELIABILITY.md ("Hostile input").
@Suite("Hostile input: the listener's answer to every bad input")
struct HostileInputTests {
    enum Expected: Sendable, CustomStringConvertible {
        case status(Int)
        case closeCode(Int)
        /// The listener answered with a BLIP frame and did not close.
        case blipReply

        var description: String {
            switch self {
            case .status(let status): "HTTP \(status)"
            case .closeCode(let code): "WebSocket close \(code)"
            case .blipReply: "BLIP reply"
            }
        }
    }

    struct Case: Sendable {
        var name: String
        var chunks: [[UInt8]]
        var expected: Expected
        var needsCredentials = false
        /// Words a log line of the listener must contain, naming why it closed.
        var loggedReason: String?
    }

    static let upgradeHead =
        "GET /db/_blipsync HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
        + "Sec-WebSocket-Protocol: BLIP_3+CBMobile_3\r\n"
    static let upgrade = Array((upgradeHead + "\r\n").utf8)

    static func http(_ text: String) -> [[UInt8]] { [Array(text.utf8)] }

    static func get(_ target: String, headers: String = "") -> [[UInt8]] {
        http("GET \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\(headers)\r\n")
    }

    static func upgrade(path: String = "/db/_blipsync", replacing: [String: String?] = [:], adding: String = "")
        -> [[UInt8]]
    {
        var lines = [
            "Host: 127.0.0.1", "Upgrade: websocket", "Connection: Upgrade",
            "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Version: 13",
            "Sec-WebSocket-Protocol: BLIP_3+CBMobile_3",
        ]
        for (name, value) in replacing {
            lines.removeAll { $0.hasPrefix(name + ":") }
            if let value { lines.append("\(name): \(value)") }
        }
        return http("GET \(path) HTTP/1.1\r\n" + lines.joined(separator: "\r\n") + "\r\n" + adding + "\r\n")
    }

    static func basic(_ credentials: String) -> String {
        "Authorization: Basic \(Data(credentials.utf8).base64EncodedString())\r\n"
    }

    /// An upgrade followed by WebSocket frames (sent once the 101 is on its way).
    static func afterUpgrade(_ frames: [UInt8]...) -> [[UInt8]] {
        [upgrade] + frames
    }

    /// A BLIP data frame, encoded as the codec would, for request `number` with a fresh checksum stream.
    static func blipFrame(number: UInt64, type: BLIPFrameType, payload: [UInt8], compress: Bool = false) -> [UInt8] {
        let encoder = try! BLIPFrameEncoder()
        return encoder.encodeFrame(number: number, type: type, flags: [], chunk: payload[...], compress: compress)
    }

    /// The payload of a BLIP request with `properties` (already NUL-separated) and no body.
    static func blipPayload(_ properties: String) -> [UInt8] {
        let bytes = Array(properties.utf8)
        var payload: [UInt8] = []
        Varint.append(UInt64(bytes.count), to: &payload)
        return payload + bytes
    }

    static func binary(_ payload: [UInt8]) -> [UInt8] { webSocketFrame(opcode: 0x2, payload: payload) }

    static var httpCases: [Case] {
        let bigValue = String(repeating: "a", count: 100 << 10)
        let manyHeaders = (0..<200).map { "X-Filler-\($0): \(String(repeating: "b", count: 500))\r\n" }.joined()
        return [
            Case(
                name: "one header field of 100 KiB", chunks: get("/", headers: "X-Big: \(bigValue)\r\n"),
                expected: .status(431)),
            Case(
                name: "200 header fields totalling 100 KiB", chunks: get("/", headers: manyHeaders),
                expected: .status(431)),
            Case(
                name: "a 100 KiB cookie on the upgrade", chunks: upgrade(adding: "Cookie: c=\(bigValue)\r\n"),
                expected: .status(431)),
            Case(name: "a 100 KiB request target", chunks: get("/" + bigValue), expected: .status(431)),
            Case(
                name: "binary garbage instead of a request",
                chunks: [[0x00, 0x01, 0x02, 0xFF, 0xFE, 0x0D, 0x0A, 0x0D, 0x0A]], expected: .status(400)),
            Case(
                name: "a TLS ClientHello on the plain port",
                chunks: [
                    [0x16, 0x03, 0x01, 0x00, 0x2F, 0x01, 0x00, 0x00, 0x2B, 0x03, 0x03]
                        + Array(repeating: 0x41, count: 40)
                ], expected: .status(400)),
            Case(
                name: "the HTTP/2 connection preface", chunks: http("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"),
                expected: .status(400)),
            Case(
                name: "a method with invalid characters", chunks: http("G@T / HTTP/1.1\r\nHost: x\r\n\r\n"),
                expected: .status(400)),
            Case(
                name: "an unknown HTTP version", chunks: http("GET / HTTP/9.9\r\nHost: x\r\n\r\n"),
                expected: .status(400)),
            Case(
                name: "a request line without a version", chunks: http("GET /\r\nHost: x\r\n\r\n"),
                expected: .status(400)),
            Case(
                name: "a header line without a colon", chunks: http("GET / HTTP/1.1\r\nHost x\r\n\r\n"),
                expected: .status(400)),
            Case(
                name: "a space inside a header name", chunks: http("GET / HTTP/1.1\r\nHo st: x\r\n\r\n"),
                expected: .status(400)),
            Case(
                name: "a NUL byte in a header value", chunks: http("GET / HTTP/1.1\r\nHost: x\u{0}y\r\n\r\n"),
                expected: .status(400)),
            Case(
                name: "a bare CR inside a header value", chunks: http("GET / HTTP/1.1\r\nHost: x\ry\r\n\r\n"),
                expected: .status(400)),
            Case(
                name: "an obsolete folded header line", chunks: http("GET / HTTP/1.1\r\nHost: x\r\n folded\r\n\r\n"),
                expected: .status(400)),
            Case(
                name: "Content-Length and Transfer-Encoding together",
                chunks: http(
                    "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"),
                expected: .status(400)),
            Case(
                name: "a negative Content-Length",
                chunks: http("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n"), expected: .status(400)),
            Case(
                name: "a Content-Length beyond 64 bits",
                chunks: http("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999999\r\n\r\n"),
                expected: .status(400)),
            Case(
                name: "two different Content-Lengths",
                chunks: http("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab"),
                expected: .status(400)),
            Case(
                name: "a chunk size that is not hexadecimal",
                chunks: http("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n"),
                expected: .status(400)),
            Case(
                name: "a chunk size beyond 64 bits",
                chunks: http(
                    "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nFFFFFFFFFFFFFFFFFFFF\r\nabc\r\n"),
                expected: .status(400)),
            Case(
                name: "a POST with a body to the root",
                chunks: http("POST / HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 5\r\n\r\nhello"),
                expected: .status(404)),
            Case(name: "a path that does not exist", chunks: get("/no/such/path"), expected: .status(404)),
            Case(
                name: "a DELETE of a database",
                chunks: http("DELETE /db HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"), expected: .status(404)),
            Case(name: "a plain GET of _blipsync", chunks: get("/db/_blipsync"), expected: .status(400)),
            Case(
                name: "a POST to _blipsync",
                chunks: http(
                    "POST /db/_blipsync HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"),
                expected: .status(404)),
            Case(
                name: "an upgrade for an unknown database", chunks: upgrade(path: "/nosuchdb/_blipsync"),
                expected: .status(404)),
            Case(
                name: "an upgrade whose database is ../../etc", chunks: upgrade(path: "/..%2F..%2Fetc/_blipsync"),
                expected: .status(404)),
            Case(
                name: "an upgrade whose database contains NUL", chunks: upgrade(path: "/db%00x/_blipsync"),
                expected: .status(404)),
            Case(
                name: "an upgrade whose database is invalid percent-encoding", chunks: upgrade(path: "/%zz/_blipsync"),
                expected: .status(404)),
            Case(
                name: "an upgrade whose database name is 4 KiB long",
                chunks: upgrade(path: "/\(String(repeating: "d", count: 4096))/_blipsync"), expected: .status(404)),
            Case(
                name: "an upgrade without Sec-WebSocket-Key", chunks: upgrade(replacing: ["Sec-WebSocket-Key": nil]),
                expected: .status(400)),
            Case(
                name: "an upgrade with Sec-WebSocket-Version 8",
                chunks: upgrade(replacing: ["Sec-WebSocket-Version": "8"]), expected: .status(400)),
            Case(
                name: "an upgrade offering no subprotocol", chunks: upgrade(replacing: ["Sec-WebSocket-Protocol": nil]),
                expected: .status(403)),
            Case(
                name: "an upgrade offering only unknown subprotocols",
                chunks: upgrade(replacing: ["Sec-WebSocket-Protocol": "BLIP_2+CBMobile_1, chat"]),
                expected: .status(403)),
            Case(
                name: "an upgrade to another protocol (h2c)", chunks: upgrade(replacing: ["Upgrade": "h2c"]),
                expected: .status(400)),
        ]
    }

    /// Upgrade requests with a body, which NIO's upgrade handler gives up on without an answer (found by the HTTP
    /// fuzz run). After the other rows, so that the numbers RELIABILITY.md refers to stay.
    static var upgradeWithBodyCases: [Case] {
        [
            Case(
                name: "an upgrade with a body",
                chunks: upgrade(adding: "Content-Length: 5\r\n").map { $0 + Array("hello".utf8) },
                expected: .status(400), loggedReason: "upgrade request with a body"),
            Case(
                name: "an upgrade with a chunked body and no subprotocol",
                chunks: upgrade(replacing: ["Sec-WebSocket-Protocol": nil], adding: "Transfer-Encoding: chunked\r\n")
                    .map { $0 + Array("3\r\nabc\r\n0\r\n\r\n".utf8) }, expected: .status(400),
                loggedReason: "upgrade request with a body"),
        ]
    }

    static var authenticationCases: [Case] {
        [
            Case(
                name: "an upgrade without credentials", chunks: upgrade(), expected: .status(401),
                needsCredentials: true),
            Case(
                name: "an upgrade with a wrong password", chunks: upgrade(adding: basic("alice:wrong")),
                expected: .status(401), needsCredentials: true),
            Case(
                name: "an upgrade for an unknown user", chunks: upgrade(adding: basic("mallory:s3cret")),
                expected: .status(401), needsCredentials: true),
            Case(
                name: "an upgrade with an empty user and password", chunks: upgrade(adding: basic(":")),
                expected: .status(401), needsCredentials: true),
            Case(
                name: "Basic credentials without a colon", chunks: upgrade(adding: basic("alice")),
                expected: .status(401), needsCredentials: true),
            Case(
                name: "Basic credentials that are not base64",
                chunks: upgrade(adding: "Authorization: Basic %%%not-base64%%%\r\n"), expected: .status(401),
                needsCredentials: true),
            Case(
                name: "Basic credentials that are not UTF-8",
                chunks: upgrade(
                    adding: "Authorization: Basic \(Data([0xFF, 0xFE, 0x3A, 0xC3]).base64EncodedString())\r\n"),
                expected: .status(401), needsCredentials: true),
            Case(
                name: "a Bearer token instead of Basic",
                chunks: upgrade(adding: "Authorization: Bearer abc.def.ghi\r\n"), expected: .status(401),
                needsCredentials: true),
            Case(
                name: "a 60 KiB password",
                chunks: upgrade(adding: basic("alice:" + String(repeating: "p", count: 60 << 10))),
                expected: .status(431), needsCredentials: true),
            Case(
                name: "the right password for the wrong user's case (ALICE)",
                chunks: upgrade(adding: basic("ALICE:s3cret")), expected: .status(401), needsCredentials: true),
            Case(
                name: "a database info request without credentials", chunks: get("/db"), expected: .status(401),
                needsCredentials: true),
            Case(
                name: "an unknown database without credentials (no name disclosed)",
                chunks: upgrade(path: "/secret/_blipsync"), expected: .status(401), needsCredentials: true),
        ]
    }

    static var framingCases: [Case] {
        let properties = blipPayload("Profile\u{0}getCheckpoint\u{0}client\u{0}x\u{0}")
        let validRequest = blipFrame(number: 1, type: .request, payload: properties)
        var badChecksum = validRequest
        badChecksum[badChecksum.count - 1] ^= 0x01
        return [
            Case(
                name: "a text frame", chunks: afterUpgrade(webSocketFrame(opcode: 0x1, payload: Array("hello".utf8))),
                expected: .closeCode(1002)),
            Case(
                name: "a reserved opcode (0x3)", chunks: afterUpgrade(webSocketFrame(opcode: 0x3, payload: [1, 2, 3])),
                expected: .closeCode(1002)),
            Case(
                name: "RSV1 set without a negotiated extension",
                chunks: afterUpgrade(webSocketFrame(opcode: 0x2, payload: validRequest, rsv: 0x4)),
                expected: .closeCode(1002)),
            Case(
                name: "a fragmented ping", chunks: afterUpgrade(webSocketFrame(opcode: 0x9, payload: [1], fin: false)),
                expected: .closeCode(1002)),
            Case(
                name: "a ping of 126 bytes",
                chunks: afterUpgrade(webSocketFrame(opcode: 0x9, payload: Array(repeating: 7, count: 126))),
                expected: .closeCode(1002)),
            Case(
                name: "a frame declaring 2 MiB (over the 1 MiB frame limit)",
                chunks: afterUpgrade(webSocketFrame(opcode: 0x2, payload: [], declaredLength: 2 << 20)),
                expected: .closeCode(1009)),
            Case(
                name: "a frame declaring 2^63 bytes",
                chunks: afterUpgrade(webSocketFrame(opcode: 0x2, payload: [], declaredLength: 1 << 63)),
                expected: .closeCode(1009)),
            Case(name: "an empty BLIP frame", chunks: afterUpgrade(binary([])), expected: .closeCode(1002)),
            Case(
                name: "a BLIP frame of varint garbage", chunks: afterUpgrade(binary(Array(repeating: 0xFF, count: 12))),
                expected: .closeCode(1002)),
            Case(
                name: "a BLIP request with a wrong checksum", chunks: afterUpgrade(binary(badChecksum)),
                expected: .closeCode(1002)),
            Case(
                name: "a BLIP request that is not deflate but flagged compressed",
                chunks: afterUpgrade(binary([0x01, 0x08] + Array(repeating: 0x55, count: 20))),
                expected: .closeCode(1002)),
            Case(
                name: "a BLIP reply to a request never sent",
                chunks: afterUpgrade(binary(blipFrame(number: 9, type: .reply, payload: blipPayload("")))),
                expected: .closeCode(1002)),
            Case(
                name: "a BLIP request numbered 5 first (out of order)",
                chunks: afterUpgrade(binary(blipFrame(number: 5, type: .request, payload: properties))),
                expected: .closeCode(1002)),
            Case(
                name: "BLIP properties whose length runs past the frame",
                chunks: afterUpgrade(binary(blipFrame(number: 1, type: .request, payload: [0x7F, 0x41]))),
                expected: .closeCode(1002)),
            Case(
                name: "BLIP properties without their final NUL",
                chunks: afterUpgrade(
                    binary(blipFrame(number: 1, type: .request, payload: [0x07] + Array("Profile".utf8)))),
                expected: .closeCode(1002)),
            // Behind the request in the same packet, before the 101 is written (this aborted the node until 4063f1d).
            Case(
                name: "a text frame in the same packet as the upgrade",
                chunks: [upgrade + webSocketFrame(opcode: 0x1, payload: Array("hello".utf8))],
                expected: .closeCode(1002)),
            Case(
                name: "a frame declaring 2 MiB in the same packet as the upgrade",
                chunks: [upgrade + webSocketFrame(opcode: 0x2, payload: [], declaredLength: 2 << 20)],
                expected: .closeCode(1009)),
            Case(
                name: "a bad-checksum BLIP request in the same packet as the upgrade",
                chunks: [upgrade + binary(badChecksum)], expected: .closeCode(1002)),
            // Read as a WebSocket frame ("GE": RSV1 set, unmasked, 69 bytes), so it needs more than 69 bytes behind it.
            Case(
                name: "a second HTTP request in the same packet as the upgrade",
                chunks: [
                    upgrade
                        + Array(
                            "GET / HTTP/1.1\r\nHost: x\r\nUser-Agent: \(String(repeating: "u", count: 64))\r\n\r\n".utf8
                        )
                ], expected: .closeCode(1002)),
            Case(
                name: "a second upgrade in the same packet as the upgrade", chunks: [upgrade + upgrade],
                expected: .closeCode(1002)),
            // NIO upgraded this while its HTTP decoder, which wants the Connection token, parsed on: the GET reached the
            // WebSocket decoder as HTTP parts and aborted the process (HTTPFuzzTests found it).
            Case(
                name: "an upgrade without Connection: Upgrade, a GET behind it in the same packet",
                chunks: [upgrade(replacing: ["Connection": nil])[0] + Array("GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8)],
                expected: .status(400)),
            Case(
                name: "an upgrade with Connection: keep-alive, a GET behind it in the same packet",
                chunks: [
                    upgrade(replacing: ["Connection": "keep-alive"])[0]
                        + Array("GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8)
                ], expected: .status(400)),
        ]
    }

    /// Frames a server must refuse although the decoders below it accept them: unmasked client frames (RFC 6455
    /// §5.1) and fragments that make up no message (§5.4), each once served or left unanswered until the idle
    /// timeout; and a BLIP frame type that BLIP 3 does not define, which is skipped.
    static var maskingAndFragmentationCases: [Case] {
        let validRequest = blipFrame(
            number: 1, type: .request, payload: blipPayload("Profile\u{0}getCheckpoint\u{0}client\u{0}x\u{0}"))
        // The type sits in the low three bits of the flags byte, which follows the one-byte message number; the
        // checksum covers the payload only, so the frame is otherwise intact.
        var undefinedType = validRequest
        undefinedType[1] = (undefinedType[1] & ~BLIPFrameFlags.typeMask) | 7
        return [
            Case(
                name: "a valid BLIP request in an unmasked frame",
                chunks: afterUpgrade(webSocketFrame(opcode: 0x2, payload: validRequest, masked: false)),
                expected: .closeCode(1002), loggedReason: "unmasked frame"),
            Case(
                name: "an unmasked ping", chunks: afterUpgrade(webSocketFrame(opcode: 0x9, payload: [], masked: false)),
                expected: .closeCode(1002), loggedReason: "unmasked frame"),
            Case(
                name: "a valid BLIP request in an unmasked frame in the same packet as the upgrade",
                chunks: [upgrade + webSocketFrame(opcode: 0x2, payload: validRequest, masked: false)],
                expected: .closeCode(1002), loggedReason: "unmasked frame"),
            Case(
                name: "a continuation frame without a first fragment",
                chunks: afterUpgrade(webSocketFrame(opcode: 0x0, payload: validRequest)), expected: .closeCode(1002),
                loggedReason: "continuation frame without a first fragment"),
            Case(
                name: "a new binary frame inside an unfinished fragmented message",
                chunks: afterUpgrade(
                    webSocketFrame(opcode: 0x2, payload: Array(validRequest.prefix(4)), fin: false)
                        + webSocketFrame(opcode: 0x2, payload: validRequest)), expected: .closeCode(1002),
                loggedReason: "inside an unfinished fragmented message"),
            // Skipped, as LiteCore skips it (spec §2.11): the valid request behind it is still answered.
            Case(
                name: "a BLIP frame of undefined type 7, then a valid request",
                chunks: afterUpgrade(binary(undefinedType), binary(validRequest)), expected: .blipReply,
                loggedReason: "ignoring BLIP frame of unknown type"),
        ]
    }

    struct Observed: Sendable, CustomStringConvertible {
        var exchange: RawExchange

        var outcome: Expected? {
            if exchange.status == 101 {
                if let code = closeCode(inServerFrames: exchange.afterHead) { return .closeCode(code) }
                return containsBinaryFrame(inServerFrames: exchange.afterHead) ? .blipReply : nil
            }
            return exchange.status.map { .status($0) }
        }

        var description: String {
            let closed = exchange.closedByServer ? "connection closed" : "connection left open"
            guard let outcome else { return "no answer, \(closed)" }
            return "\(outcome), \(closed)"
        }
    }

    /// Sends each case on a connection of its own and returns the markdown rows: input, answer, log lines.
    static func send(
        _ cases: [Case], to gateway: TestGateway, logs: LogRecorder
    ) async throws -> [(Case, Observed, [String])] {
        var results: [(Case, Observed, [String])] = []
        for item in cases {
            let start = logs.count
            // An answer that ends the connection ends the wait as soon as it comes, so those cases can wait long
            // enough for a machine loaded by the suites beside this one (3 s once saw a 431 come too late); a
            // reply on a connection that stays open is read within the shorter wait.
            let quietFor: Duration = if case .blipReply = item.expected { .seconds(3) } else { .seconds(15) }
            let exchange = try await RawExchange.run(
                port: gateway.port, chunks: item.chunks, pause: .milliseconds(150), quietFor: quietFor)
            // Log lines written as the connection winds down.
            try await Task.sleep(for: .milliseconds(30))
            results.append((item, Observed(exchange: exchange), logs.lines(from: start)))
        }
        return results
    }

    static func row(_ number: Int, _ result: (Case, Observed, [String])) -> String {
        let (item, observed, lines) = result
        let logged = lines.map { "`\($0.replacingOccurrences(of: "|", with: "\\|").prefix(160))`" }
            .joined(separator: "<br>")
        return "| \(number) | \(item.name) | \(observed) | \(logged.isEmpty ? "—" : logged) |"
    }

    @Test("every malformed request, refused upgrade and framing error gets its answer; a bystander replicates on")
    func badInputs() async throws {
        let logs = LogRecorder()
        let table = Table()
        for (cases, authentication) in [
            (Self.httpCases + Self.framingCases, ListenerAuthentication.none),
            (Self.authenticationCases, TestGateway.users),
            (Self.maskingAndFragmentationCases, ListenerAuthentication.none),
            (Self.upgradeWithBodyCases, ListenerAuthentication.none),
        ] {
            try await TestGateway.run(
                settings: TestGateway.settings(authentication: authentication), logger: logs.logger(level: .debug)
            ) { gateway in
                let credentials = cases.first?.needsCredentials == true ? ("alice", "s3cret") : nil
                try await ActivePeer.connect(port: gateway.port, credentials: credentials) { bystander in
                    try await ListenerResourceLimitTests.expectAnswered(by: bystander)
                    let results = try await Self.send(cases, to: gateway, logs: logs)
                    for result in results {
                        let (item, observed, lines) = result
                        await table.append(result)
                        if let reason = item.loggedReason {
                            #expect(
                                lines.contains { $0.contains(reason) }, "\(item.name): no log line names \"\(reason)\"")
                        }
                        #expect(
                            observed.outcome?.description == item.expected.description,
                            "\(item.name): expected \(item.expected), got \(observed)")
                        if case .blipReply = item.expected {
                            #expect(
                                !observed.exchange.closedByServer, "\(item.name): the listener closed the connection")
                        } else {
                            #expect(
                                observed.exchange.closedByServer, "\(item.name): the listener left the connection open")
                        }
                    }
                    // The node stayed up and the client connected throughout was not disturbed.
                    try await ListenerResourceLimitTests.expectAnswered(by: bystander)
                    #expect(await gateway.listener.status().activeConnections == 1)
                }
            }
        }
        print("hostile-input table:\n" + (await table.rows).joined(separator: "\n"))
    }

    actor Table {
        private(set) var rows: [String] = []

        func append(_ result: (Case, Observed, [String])) {
            rows.append(HostileInputTests.row(rows.count + 1, result))
        }

        func rowsAppend(_ row: String) {
            rows.append(row)
        }
    }
}

/// Well-framed replication requests with bad contents: each gets an error reply on a connection that stays
/// open (or, where the protocol allows it, a reply), and the node and a bystander carry on.
extension HostileInputTests {
    struct MessageCase: Sendable {
        var name: String
        var profile: String
        var properties: [(key: String, value: String)]
        var body: String
        /// The error reply expected ("domain/code"), or nil when a normal reply is right.
        var expectedError: String?
    }

    /// Answers the listener's getAttachment with bytes that do not match any digest asked for.
    static func answerWithWrongBlobBytes(_ connection: BLIPConnection) async {
        await connection.setHandler(for: "getAttachment") { request in request.reply(body: Array("wrong".utf8)) }
    }

    static let wrongBlob = "sha1-" + Data(repeating: 9, count: 20).base64EncodedString()

    static var messageCases: [MessageCase] {
        [
            MessageCase(
                name: "rev whose body is not JSON", profile: "rev", properties: [("id", "m1"), ("rev", "1-aa")],
                body: "not json", expectedError: "HTTP/400"),
            MessageCase(
                name: "rev whose body is a JSON array", profile: "rev", properties: [("id", "m2"), ("rev", "1-aa")],
                body: "[1,2]", expectedError: "HTTP/400"),
            MessageCase(
                name: "rev whose body is truncated JSON", profile: "rev", properties: [("id", "m3"), ("rev", "1-aa")],
                body: #"{"a":"#, expectedError: "HTTP/400"),
            MessageCase(
                name: "rev nested 100,000 arrays deep", profile: "rev", properties: [("id", "m4"), ("rev", "1-aa")],
                body: #"{"a":"# + String(repeating: "[", count: 100_000), expectedError: "HTTP/400"),
            MessageCase(
                name: "rev without an id", profile: "rev", properties: [("rev", "1-aa")], body: "{}",
                expectedError: "HTTP/400"),
            MessageCase(
                name: "rev with an empty id", profile: "rev", properties: [("id", ""), ("rev", "1-aa")], body: "{}",
                expectedError: "HTTP/400"),
            MessageCase(
                name: "rev without a rev", profile: "rev", properties: [("id", "m5")], body: "{}",
                expectedError: "HTTP/400"),
            MessageCase(
                name: "rev with revision ID 'garbage'", profile: "rev", properties: [("id", "m6"), ("rev", "garbage")],
                body: "{}", expectedError: "HTTP/400"),
            MessageCase(
                name: "rev with generation 0", profile: "rev", properties: [("id", "m7"), ("rev", "0-a")], body: "{}",
                expectedError: "HTTP/400"),
            MessageCase(
                name: "rev with a negative generation", profile: "rev", properties: [("id", "m8"), ("rev", "-1-a")],
                body: "{}", expectedError: "HTTP/400"),
            MessageCase(
                name: "rev with a generation beyond 64 bits", profile: "rev",
                properties: [("id", "m9"), ("rev", "99999999999999999999999-a")], body: "{}", expectedError: "HTTP/400"),
            MessageCase(
                name: "rev with an empty revision suffix", profile: "rev", properties: [("id", "m10"), ("rev", "1-")],
                body: "{}", expectedError: "HTTP/400"),
            MessageCase(
                name: "rev whose history skips generations (disconnected)", profile: "rev",
                properties: [("id", "m11"), ("rev", "5-ee"), ("history", "2-bb,1-aa")], body: "{}",
                expectedError: "HTTP/400"),
            MessageCase(
                name: "rev whose history goes up, not down", profile: "rev",
                properties: [("id", "m12"), ("rev", "2-bb"), ("history", "3-cc")], body: "{}", expectedError: "HTTP/400"
            ),
            MessageCase(
                name: "rev with a delta against a missing base", profile: "rev",
                properties: [("id", "m13"), ("rev", "2-bb"), ("deltaSrc", "1-ff")], body: #"{"x":[1]}"#,
                expectedError: "HTTP/422"),
            MessageCase(
                name: "rev whose blob the client serves with the wrong bytes", profile: "rev",
                properties: [("id", "m14"), ("rev", "1-aa")],
                body: #"{"f":{"@type":"blob","digest":"\#(wrongBlob)","length":5}}"#, expectedError: "HTTP/400"),
            MessageCase(
                name: "rev with a blob of negative length", profile: "rev",
                properties: [("id", "m15"), ("rev", "1-aa")],
                body: #"{"f":{"@type":"blob","digest":"\#(wrongBlob)","length":-5}}"#, expectedError: "HTTP/400"),
            MessageCase(
                name: "rev with a sequence beyond 64 bits", profile: "rev",
                properties: [("id", "m16"), ("rev", "1-aa"), ("sequence", "18446744073709551616")], body: "{}",
                expectedError: nil),
            MessageCase(
                name: "rev for a document never proposed", profile: "rev",
                properties: [("id", "m17"), ("rev", "1-aa")], body: "{}", expectedError: nil),
            MessageCase(
                name: "proposeChanges whose body is not JSON", profile: "proposeChanges", properties: [], body: "[[",
                expectedError: "HTTP/400"),
            MessageCase(
                name: "proposeChanges with a bad revision ID", profile: "proposeChanges", properties: [],
                body: #"[["doc","bad"]]"#, expectedError: "HTTP/400"),
            MessageCase(
                name: "changes whose body is an object", profile: "changes", properties: [], body: "{}",
                expectedError: "HTTP/400"),
            MessageCase(
                name: "changes with a negative sequence", profile: "changes", properties: [],
                body: #"[[-1,"doc","1-aa"]]"#, expectedError: nil),
            MessageCase(
                name: "subChanges since a sequence from the future", profile: "subChanges",
                properties: [("since", "99999999999")], body: "", expectedError: nil),
            MessageCase(
                name: "subChanges since garbage", profile: "subChanges", properties: [("since", "garbage")], body: "",
                expectedError: "HTTP/400"),
            MessageCase(
                name: "subChanges with a negative batch size", profile: "subChanges", properties: [("batch", "-5")],
                body: "", expectedError: "HTTP/400"),
            MessageCase(
                name: "getCheckpoint without a client", profile: "getCheckpoint", properties: [], body: "",
                expectedError: "HTTP/400"),
            MessageCase(
                name: "setCheckpoint whose body is not JSON", profile: "setCheckpoint", properties: [("client", "c")],
                body: "{{", expectedError: "HTTP/400"),
            MessageCase(
                name: "setCheckpoint against a revision that is not current", profile: "setCheckpoint",
                properties: [("client", "c2"), ("rev", "7-9")], body: "{}", expectedError: "HTTP/409"),
            MessageCase(
                name: "getAttachment of a blob not in the store", profile: "getAttachment",
                properties: [("digest", wrongBlob)], body: "", expectedError: "HTTP/404"),
            MessageCase(
                name: "getAttachment with a digest that is a path", profile: "getAttachment",
                properties: [("digest", "sha1-../../../etc/passwd")], body: "", expectedError: "HTTP/400"),
            MessageCase(
                name: "proveAttachment without a nonce", profile: "proveAttachment",
                properties: [("digest", wrongBlob)], body: "", expectedError: "BLIP/400"),
            MessageCase(
                name: "a request without a Profile", profile: "", properties: [], body: "", expectedError: "BLIP/404"),
            MessageCase(
                name: "an unknown profile", profile: "_deleteEverything", properties: [], body: "",
                expectedError: "BLIP/404"),
        ]
    }

    @Test("every bad replication request gets an error reply; the connection, the node and a bystander carry on")
    func badMessages() async throws {
        let logs = LogRecorder()
        let table = Table()
        try await TestGateway.run(logger: logs.logger(level: .debug)) { gateway in
            try await ActivePeer.connect(port: gateway.port) { bystander in
                try await ListenerResourceLimitTests.expectAnswered(by: bystander)
                try await ActivePeer.connect(port: gateway.port, configure: Self.answerWithWrongBlobBytes) { peer in
                    for item in Self.messageCases {
                        let observed = try await Self.send(item, on: peer, logs: logs, table: table)
                        #expect(observed.outcome == (item.expectedError ?? "reply"), "\(item.name): \(observed)")
                    }
                    #expect(await peer.connection.isOpen, "the listener closed the connection")
                }
                try await ListenerResourceLimitTests.expectAnswered(by: bystander)
            }
        }
        print("hostile-message table:\n" + (await table.rows).joined(separator: "\n"))
    }
}

extension HostileInputTests {
    static let sourceA = "ddja2MCRTril1aX52skGJg"
    static let sourceB = "W4IpzVcVScq75WMaxJ6WUA"
    static let sourceC = "HDL3DmjHQ6aGU6XSGrYP5g"

    /// Malformed versions, sent on a CBMobile_4 connection (spec §4.6, WIRE-NOTES §4): each is refused naming the
    /// problem, and nothing is stored.
    static var versionMessageCases: [MessageCase] {
        [
            MessageCase(
                name: "CBMobile_4 rev whose timestamp is not hex", profile: "rev",
                properties: [("id", "v1"), ("rev", "18ebd07g63c50000@\(sourceA)")], body: "{}",
                expectedError: "HTTP/400"),
            MessageCase(
                name: "CBMobile_4 rev whose timestamp has 17 hex digits", profile: "rev",
                properties: [("id", "v2"), ("rev", "118ebd07f63c50000@\(sourceA)")], body: "{}",
                expectedError: "HTTP/400"),
            MessageCase(
                name: "CBMobile_4 rev with a short source ID", profile: "rev",
                properties: [("id", "v3"), ("rev", "18ebd07f63c50000@ddja2MCR")], body: "{}", expectedError: "HTTP/400"),
            MessageCase(
                name: "CBMobile_4 rev whose source ID is not base64", profile: "rev",
                properties: [("id", "v4"), ("rev", "18ebd07f63c50000@ddja2MCRTril1aX52skG!!")], body: "{}",
                expectedError: "HTTP/400"),
            MessageCase(
                name: "CBMobile_4 rev with one lone merge version", profile: "rev",
                properties: [
                    ("id", "v5"), ("rev", "18ebd07f63c50000@\(sourceA)"),
                    ("history", "18ebd07f63c40000@\(sourceB); 18ebd07f63c30000@\(sourceC)"),
                ], body: "{}", expectedError: "HTTP/400"),
            MessageCase(
                name: "CBMobile_4 rev naming one source twice", profile: "rev",
                properties: [
                    ("id", "v6"), ("rev", "18ebd07f63c50000@\(sourceA)"), ("history", "18ebd07f63c40000@\(sourceA)"),
                ], body: "{}", expectedError: "HTTP/400"),
            MessageCase(
                name: "CBMobile_4 rev older than the history it claims", profile: "rev",
                properties: [
                    ("id", "v7"), ("rev", "18ebd07f63c50000@\(sourceA)"), ("history", "18ebd07f63c60000@\(sourceB)"),
                ], body: "{}", expectedError: "HTTP/400"),
            MessageCase(
                name: "CBMobile_4 rev from the far future", profile: "rev",
                properties: [("id", "v8"), ("rev", "ffffffffffff0000@\(sourceA)")], body: "{}",
                expectedError: "HTTP/400"),
            MessageCase(
                name: "CBMobile_4 proposeChanges with the timestamp as a JSON number", profile: "proposeChanges",
                properties: [("collection", "0")], body: #"[["v9",1795758121990000000,"",30]]"#,
                expectedError: "HTTP/400"),
            MessageCase(
                name: "CBMobile_4 proposeChanges with a malformed previous version", profile: "proposeChanges",
                properties: [("collection", "0")], body: #"[["v10","18ebd07f63c50000@\#(sourceA); zz@","",30]]"#,
                expectedError: "HTTP/400"),
            MessageCase(
                name: "CBMobile_4 subChanges asking for rev trees", profile: "subChanges",
                properties: [("collection", "0"), ("versioning", "rev-trees")], body: "",
                expectedError: "LiteCore/501"),
        ]
    }

    @Test("every malformed version on a CBMobile_4 connection gets a 400 naming it; nothing is stored")
    func badVersions() async throws {
        let logs = LogRecorder()
        let table = Table()
        try await TestGateway.run(logger: logs.logger(level: .debug)) { gateway in
            try await ActivePeer.connect(port: gateway.port, offering: "BLIP_3+CBMobile_4") { peer in
                _ = try await peer.send(
                    GetCollectionsRequest(checkpointIDs: ["cp-hostile"], collections: [.default]),
                    expecting: GetCollectionsReply.self)
                for item in Self.versionMessageCases {
                    var versionItem = item
                    if item.profile == "rev" { versionItem.properties.append(("collection", "0")) }
                    let observed = try await Self.send(versionItem, on: peer, logs: logs, table: table)
                    #expect(observed.outcome == item.expectedError, "\(item.name): \(observed)")
                    if item.profile == "rev" {
                        #expect(!observed.message.isEmpty, "\(item.name): the error names no problem")
                    }
                }
                #expect(await peer.connection.isOpen, "the listener closed the connection")
                let database = try await gateway.database
                for index in 1...10 {
                    #expect(try await database.document("v\(index)") == nil, "v\(index) was stored")
                }
                try await peer.send(
                    RevRequest(
                        docID: "v-good", revision: try WireRevision(received: "18ebd07f63c50000@\(Self.sourceA)"),
                        noConflicts: true, collection: 0, body: Array(#"{"ok":true}"#.utf8)))
                #expect(
                    try await database.document("v-good")?.vector?.current.description
                        == "18ebd07f63c50000@\(Self.sourceA)")
            }
        }
        print("hostile-version table:\n" + (await table.rows).joined(separator: "\n"))
    }
}

extension HostileInputTests {
    /// Sends one bad request on `peer` and records its row; returns "reply" or the error's `domain/code`, with the
    /// error's message.
    static func send(
        _ item: MessageCase, on peer: ActivePeer, logs: LogRecorder, table: Table
    ) async throws -> (outcome: String, message: String) {
        let start = logs.count
        var properties = BLIPProperties(item.properties)
        if !item.profile.isEmpty { properties["Profile"] = item.profile }
        let message = BLIPMessage(kind: .request, properties: properties, body: Array(item.body.utf8))
        do {
            _ = try await peer.connection.sendRequest(message)
            await table.appendMessage(item.name, "reply", logs.lines(from: start))
            return ("reply", "")
        } catch let error as BLIPErrorReply {
            let outcome = "\(error.domain)/\(error.code)"
            await table.appendMessage(
                item.name, "error reply \(outcome) \"\(error.message)\"", logs.lines(from: start))
            return (outcome, error.message)
        }
    }
}

extension HostileInputTests.Table {
    func appendMessage(_ name: String, _ outcome: String, _ lines: [String]) {
        let logged = lines.map { "`\($0.replacingOccurrences(of: "|", with: "\\|").prefix(160))`" }.joined(
            separator: "<br>")
        rowsAppend("| \(name) | \(outcome), connection stays open | \(logged.isEmpty ? "—" : logged) |")
    }
}
