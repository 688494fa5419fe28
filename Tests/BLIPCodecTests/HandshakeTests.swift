import Foundation
import Testing

@Suite("WebSocket handshakes in the transcripts")
struct HandshakeTests {
    static func header(_ name: String, in text: String) -> String? {
        for line in text.components(separatedBy: "\r\n") {
            let parts = line.split(separator: ":", maxSplits: 1)
            if parts.count == 2, parts[0].lowercased() == name.lowercased() {
                return parts[1].trimmingCharacters(in: .whitespaces)
            }
        }
        return nil
    }

    @Test("SHA-1 known answer")
    func sha1() {
        let digest = SHA1.digest(Array("abc".utf8))
        #expect(
            digest.map { String(format: "%02x", $0) }.joined()
                == "a9993e364706816aba3e25717850c26c9cd0d89d")
    }

    @Test("Sec-WebSocket-Accept and the chosen subprotocol", arguments: Fixture.fileNames(in: .couchbaseLite324))
    func handshake(fileName: String) throws {
        let fixture = try FixtureCache.named(fileName)
        for connection in fixture.connections {
            let conn = try #require(connection["conn"] as? Int)
            let request = try #require(
                fixture.httpMessages.first { $0.conn == conn && $0.direction == .activeToPassive })
            let response = try #require(
                fixture.httpMessages.first { $0.conn == conn && $0.direction == .passiveToActive })
            let offered = try #require(Self.header("Sec-WebSocket-Protocol", in: request.text))
            #expect(offered == "BLIP_3+CBMobile_3,BLIP_3+CBMobile_2")
            guard connection["http_status"] as? Int == 101 else {
                #expect(response.text.hasPrefix("HTTP/1.1 401 Unauthorized"))
                continue
            }
            #expect(response.text.hasPrefix("HTTP/1.1 101 Upgraded"))
            let key = try #require(Self.header("Sec-WebSocket-Key", in: request.text))
            let accept = Data(SHA1.digest(Array((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").utf8)))
                .base64EncodedString()
            #expect(Self.header("Sec-WebSocket-Accept", in: response.text) == accept)
            let chosen = try #require(Self.header("Sec-WebSocket-Protocol", in: response.text))
            #expect(offered.split(separator: ",").contains(Substring(chosen)))
            #expect(chosen == connection["protocol"] as? String)
        }
    }
}
