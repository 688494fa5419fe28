import Crypto
import EdgeGatewayTestSupport
import Foundation
import NIOCore
import NIOPosix
import Testing

/// The listener's side of the handshake, compared with LiteCore's: it accepts the upgrade whatever the case of
/// `Connection` and `Upgrade`, and answers with LiteCore's `101`, header for header.
@Suite("Listener handshake layout")
struct ListenerHandshakeLayoutTests {
    /// The recorded LiteCore 3.2.4 `101` response heads.
    static func recordedResponseHeads() throws -> [String] {
        let directory = packageRoot.appendingPathComponent("Tests/BLIPCodecTests/Fixtures/cbl-3.2.4")
        let text = try String(contentsOf: directory.appendingPathComponent("push-oneshot.jsonl"), encoding: .utf8)
        return try text.split(separator: "\n").compactMap { line in
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            guard object?["kind"] as? String == "http_response", let response = object?["text"] as? String,
                response.hasPrefix("HTTP/1.1 101 ")
            else { return nil }
            return response.components(separatedBy: "\r\n\r\n")[0]
        }
    }

    /// Sends `request` (then `trailing` bytes, in the same write) on a raw socket and returns the response head
    /// (without its final blank line).
    static func exchange(port: Int, request: String, trailing: [UInt8] = []) async throws -> String {
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(host: "127.0.0.1", port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        return try await channel.executeThenClose { inbound, outbound in
            var bytes = ByteBuffer(string: request)
            bytes.writeBytes(trailing)
            try await outbound.write(bytes)
            var text = ""
            for try await var chunk in inbound {
                text += chunk.readString(length: chunk.readableBytes) ?? ""
                if let end = text.range(of: "\r\n\r\n") { return String(text[..<end.lowerBound]) }
            }
            return text
        }
    }

    static func request(port: Int, key: String, connection: String, upgrade: String) -> String {
        "GET /db/_blipsync HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nUser-Agent: CouchbaseLite/3.2.4-0\r\n"
            + "Connection: \(connection)\r\nUpgrade: \(upgrade)\r\nSec-WebSocket-Version: 13\r\n"
            + "Sec-WebSocket-Key: \(key)\r\nSec-WebSocket-Protocol: BLIP_3+CBMobile_3,BLIP_3+CBMobile_2\r\n\r\n"
    }

    @Test(
        "the 101 answer is LiteCore's, header for header, whatever the case of Connection and Upgrade",
        arguments: [("Upgrade", "websocket"), ("upgrade", "WebSocket"), ("keep-alive, UPGRADE", "websocket")])
    func switchingProtocolsLayout(connection: String, upgrade: String) async throws {
        let recorded = try #require(try Self.recordedResponseHeads().first)
        try await TestGateway.run { gateway in
            let key = "dGhlIHNhbXBsZSBub25jZQ=="
            let head = try await Self.exchange(
                port: gateway.port,
                request: Self.request(port: gateway.port, key: key, connection: connection, upgrade: upgrade))
            let ours = head.components(separatedBy: "\r\n")
            let theirs = recorded.components(separatedBy: "\r\n")
            #expect(ours.first == theirs.first)
            func name(_ line: String) -> String { String(line.prefix { $0 != ":" }) }
            #expect(ours.dropFirst().map(name) == theirs.dropFirst().map(name))
            for line in theirs.dropFirst() where !["Date", "Sec-WebSocket-Accept"].contains(name(line)) {
                #expect(ours.contains(line), "\(line)")
            }
            let accept = Data(Insecure.SHA1.hash(data: Data((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").utf8)))
                .base64EncodedString()
            #expect(ours.contains("Sec-WebSocket-Accept: \(accept)"))
            let date = try #require(ours.first { $0.hasPrefix("Date: ") }).dropFirst("Date: ".count)
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "GMT")
            formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
            let parsed = try #require(formatter.date(from: String(date)))
            #expect(abs(parsed.timeIntervalSinceNow) < 60)
        }
    }

    @Test("a plain GET after the layout handler is answered as before")
    func plainRequestsUnchanged() async throws {
        try await TestGateway.run { gateway in
            let head = try await Self.exchange(
                port: gateway.port, request: "GET / HTTP/1.1\r\nHost: 127.0.0.1:\(gateway.port)\r\n\r\n")
            #expect(head.hasPrefix("HTTP/1.1 200 OK\r\n"))
        }
    }
}

extension ListenerHandshakeLayoutTests {
    @Test("WebSocket frames sent right behind the upgrade request, in the same packet, do not upset the listener")
    func framesBehindTheUpgradeRequest() async throws {
        try await TestGateway.run { gateway in
            let key = "dGhlIHNhbXBsZSBub25jZQ=="
            // Two masked, empty pings (FIN, opcode 9, mask bit, zero mask key), in the request's packet.
            let pings: [UInt8] = [0x89, 0x80, 0, 0, 0, 0, 0x89, 0x80, 0, 0, 0, 0]
            for _ in 0..<20 {
                let head = try await Self.exchange(
                    port: gateway.port,
                    request: Self.request(port: gateway.port, key: key, connection: "Upgrade", upgrade: "websocket"),
                    trailing: pings)
                #expect(head.hasPrefix("HTTP/1.1 101 "))
            }
            let after = try await Self.exchange(
                port: gateway.port, request: "GET / HTTP/1.1\r\nHost: 127.0.0.1:\(gateway.port)\r\n\r\n")
            #expect(after.hasPrefix("HTTP/1.1 200 OK\r\n"))
        }
    }
}
