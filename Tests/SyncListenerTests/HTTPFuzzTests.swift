import EdgeConfig
import EdgeGatewayTestSupport
import Foundation
import SyncListener
import Testing

/// The listener's HTTP layer under mutated requests over real loopback sockets: request lines, headers, bodies
/// (fixed and chunked), upgrades with frames behind them, and several requests in one packet. Every input goes on
/// a connection of its own and is half-closed after sending; the node must answer or close each one, stay up,
/// keep a bystander replicating, and hold no connection afterwards.
///
/// CI runs `HTTP_FUZZ_ITERATIONS` (default 100,000); `scripts/reliability/fuzz http` runs 10,000,000.
/// `HTTP_FUZZ_SEED` replays a run.
@Suite("Fuzzing the listener's HTTP layer over loopback")
struct HTTPFuzzTests {
    static var iterations: Int {
        ProcessInfo.processInfo.environment["HTTP_FUZZ_ITERATIONS"].flatMap(Int.init) ?? 100_000
    }

    static let seed: UInt64 =
        ProcessInfo.processInfo.environment["HTTP_FUZZ_SEED"].flatMap(UInt64.init)
        ?? UInt64.random(in: 0..<1_000_000_000_000)

    /// Well-formed requests the mutations start from.
    static let corpus: [[UInt8]] = {
        let frame = webSocketFrame(opcode: 0x2, payload: [0x01, 0x00, 0x00])
        let requests = [
            "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
            "GET /db HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: application/json\r\n\r\n",
            HostileInputTests.upgradeHead + "\r\n",
            "PUT /db/doc1 HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 13\r\n\r\n{\"a\":[1,2,3]}",
            "POST /db/_bulk_docs HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
                + "1a\r\n{\"docs\":[{\"_id\":\"b\"}]}  \r\n0\r\n\r\n",
            "POST /db/_bulk_get HTTP/1.1\r\nHost: x\r\nContent-Length: 25\r\n\r\n{\"docs\":[{\"id\":\"doc1\"}]}",
            "GET /db/_changes?since=0&limit=5&feed=normal HTTP/1.1\r\nHost: x\r\nCookie: a=b; c=d\r\n\r\n",
            "GET /db/doc1/file HTTP/1.1\r\nHost: x\r\nRange: bytes=0-5\r\nIf-None-Match: \"1-a\"\r\n\r\n",
            "DELETE /db/_local/x?rev=0-1 HTTP/1.1\r\nHost: x\r\nAuthorization: Basic YWxpY2U6czNjcmV0\r\n\r\n",
            "GET / HTTP/1.1\r\nHost: x\r\n\r\nGET /db HTTP/1.1\r\nHost: x\r\n\r\n",
        ]
        return requests.map { Array($0.utf8) } + [
            Array((HostileInputTests.upgradeHead + "\r\n").utf8) + frame,
            Array((HostileInputTests.upgradeHead + "\r\n").utf8) + Array("GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8),
        ]
    }()

    static let tokens: [[UInt8]] = [
        "\r\n", "\r\n\r\n", "\n", "\r", " ", ":", "\u{0}", "%", "%00", "%2F..%2F", "?", "#", "/../", "\t", ",",
        "Content-Length: 0\r\n", "Content-Length: 18446744073709551616\r\n", "Content-Length: -1\r\n",
        "Transfer-Encoding: chunked\r\n", "Transfer-Encoding: gzip, chunked\r\n", "Upgrade: websocket\r\n",
        "Connection: Upgrade\r\n", "Connection: close\r\n", "Expect: 100-continue\r\n", "Host: \r\n",
        "Sec-WebSocket-Version: 13\r\n", "Sec-WebSocket-Protocol: BLIP_3+CBMobile_3\r\n", "HTTP/1.1", "HTTP/1.0",
        "HTTP/2.0", "GET / HTTP/1.1\r\n", "ffffffffffffffff\r\n", "0\r\n\r\n", "_blipsync", "/db/_blipsync",
        "{\"_id\":\"../../x\"}", "\u{FF}\u{FE}",
    ].map { Array($0.utf8) }

    static func mutate(_ input: [UInt8], _ random: inout SplitMix64) -> [UInt8] {
        var bytes = input
        for _ in 0..<Int.random(in: 1...4, using: &random) {
            let position = bytes.isEmpty ? 0 : Int.random(in: 0..<bytes.count, using: &random)
            switch Int.random(in: 0..<8, using: &random) {
            case 0 where !bytes.isEmpty:
                bytes[position] ^= UInt8(1) << UInt8.random(in: 0..<8, using: &random)
            case 1 where !bytes.isEmpty:
                bytes[position] = UInt8.random(in: 0...255, using: &random)
            case 2:
                bytes.insert(contentsOf: tokens.randomElement(using: &random)!, at: position)
            case 3 where !bytes.isEmpty:
                let end = min(bytes.count, position + Int.random(in: 1...32, using: &random))
                bytes.removeSubrange(position..<end)
            case 4 where !bytes.isEmpty:
                let end = min(bytes.count, position + Int.random(in: 1...64, using: &random))
                let stretch = Array(bytes[position..<end])
                for _ in 0..<Int.random(in: 1...8, using: &random) { bytes.insert(contentsOf: stretch, at: position) }
            case 5:
                bytes = Array(bytes.prefix(position))
            case 6:
                bytes += corpus.randomElement(using: &random)!
            default:
                bytes.insert(
                    contentsOf: [UInt8](
                        repeating: UInt8.random(in: 0x20...0x7E, using: &random),
                        count: Int.random(in: 1...300, using: &random)),
                    at: position)
            }
        }
        return bytes
    }

    /// An input and what came back, printable on one line, for the inputs the server left open.
    static func sample(_ input: [UInt8], _ exchange: RawExchange) -> String {
        func escaped(_ bytes: some Collection<UInt8>) -> String {
            String(decoding: bytes, as: UTF8.self).debugDescription
        }
        return "sent \(escaped(input.prefix(400))) (\(input.count) bytes, \(exchange.bytesSent) went out); "
            + "received \(exchange.received.count) bytes: \(escaped(exchange.received.prefix(200)))"
    }

    @Test("mutated requests over loopback are answered or closed; the node stays up and a bystander replicates")
    func mutatedRequests() async throws {
        var settings = TestGateway.settings(maxConnections: 64)
        settings.restAPI = .readWrite
        // Printed first, so that a run that takes the process down can be replayed.
        print("http fuzz: \(Self.iterations) inputs, seed \(Self.seed)")
        try await TestGateway.run(settings: settings, handshakeTimeout: .seconds(5)) { gateway in
            try await ActivePeer.connect(port: gateway.port) { bystander in
                try await ListenerResourceLimitTests.expectAnswered(by: bystander)
                let started = ContinuousClock.now
                var random = SplitMix64(seed: Self.seed)
                var statuses: [Int: Int] = [:]
                var leftOpen = 0
                var leftOpenSamples: [String] = []
                var sent = 0
                // In batches, so that memory stays bounded however long the run.
                while sent < Self.iterations {
                    let count = min(10_000, Self.iterations - sent)
                    let inputs = (0..<count).map { _ in Self.mutate(Self.corpus.randomElement(using: &random)!, &random)
                    }
                    // Two senders: the machine has two cores, and the listener needs its share.
                    let halves = [0, 1].map { half in inputs.indices.filter { $0 % 2 == half }.map { inputs[$0] } }
                    let exchanges = try await withThrowingTaskGroup(of: [([UInt8], RawExchange)].self) { group in
                        for half in halves {
                            group.addTask {
                                let results = try await RawExchange.runMany(
                                    port: gateway.port, inputs: half, quietFor: .seconds(6))
                                return Array(zip(half, results))
                            }
                        }
                        return try await group.reduce(into: []) { $0 += $1 }
                    }
                    for (input, exchange) in exchanges {
                        statuses[exchange.status ?? 0, default: 0] += 1
                        if !exchange.closedByServer {
                            leftOpen += 1
                            if leftOpenSamples.count < 5 { leftOpenSamples.append(Self.sample(input, exchange)) }
                        }
                    }
                    sent += exchanges.count
                }
                let elapsed = ContinuousClock.now - started
                let tally = statuses.sorted { $0.key < $1.key }.map {
                    "\($0.key == 0 ? "none" : "\($0.key)"): \($0.value)"
                }
                print(
                    "http fuzz: \(sent) inputs, seed \(Self.seed), \(elapsed): statuses \(tally.joined(separator: ", ")); "
                        + "left open after 6 s: \(leftOpen)")
                for sample in leftOpenSamples { print("http fuzz: left open: \(sample)") }
                #expect(sent == Self.iterations)
                // Every input was answered or closed within 6 s of the half-close: none may wait for the idle timeout.
                #expect(leftOpen == 0, "left open: \(leftOpenSamples.joined(separator: "; "))")
                #expect(!statuses.keys.contains { $0 >= 500 }, "a mutated request made the node fail: \(statuses)")
                // The node is up and the bystander was not disturbed.
                try await ListenerResourceLimitTests.expectAnswered(by: bystander)
                try await eventually("only the bystander's connection left") {
                    await gateway.listener.status().activeConnections <= 1
                }
                #expect(await gateway.listener.status().activeConnections == 1)
            }
        }
    }
}
