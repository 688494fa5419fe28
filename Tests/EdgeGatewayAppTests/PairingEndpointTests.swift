import EdgeGatewayTestSupport
import EdgePairing
import Foundation
import GatewayConfigurationFile
import Hummingbird
import HummingbirdTesting
import Testing

@testable import EdgeGatewayApp

@Suite("Pairing on the ops endpoint")
struct PairingEndpointTests {
    static let tlsListener = GatewayTOML.listener(tls: "self-signed")

    @Test("/pairing lists a payload that pins the listener's certificate, names its bound port and the node ID")
    func payloadJSON() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "edge-gateway-\(UUID().uuidString)")
        try await withTemporaryGateway(listeners: [Self.tlsListener], dataDirectory: directory) { application in
            try await application.test(.live) { client in
                let entries = try await client.execute(uri: "/pairing", method: .get) { response in
                    #expect(response.status == .ok)
                    return try JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [[String: String]]
                }
                let entry = try #require(entries?.first)
                #expect(entry["listener"] == "lan")
                #expect(entry["database"] == "inventory")
                let payload = try PairingPayload(decoding: try #require(entry["payload"]))
                #expect(payload.addresses == ["127.0.0.1"])
                #expect(payload.port > 0)
                #expect(payload.database == "inventory")
                #expect(payload.sha256ColonHex == entry["sha256"])
                let storedID = try String(contentsOf: directory.appendingPathComponent("node-id"), encoding: .utf8)
                #expect(storedID == payload.nodeID.uuidString.lowercased() + "\n")
            }
        }
    }

    @Test("/pairing.png and /pairing.svg render the QR code; an unknown database is a 404")
    func images() async throws {
        try await withTemporaryGateway(listeners: [Self.tlsListener]) { application in
            try await application.test(.live) { client in
                try await client.execute(uri: "/pairing.png", method: .get) { response in
                    #expect(response.status == .ok)
                    #expect(response.headers[.contentType] == "image/png")
                    #expect(
                        Array(Data(buffer: response.body).prefix(8)) == [
                            0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A,
                        ])
                }
                try await client.execute(uri: "/pairing.svg", method: .get) { response in
                    #expect(response.status == .ok)
                    #expect(
                        String(buffer: response.body).hasPrefix("<svg")
                            || String(buffer: response.body).hasPrefix("<?xml"))
                }
                try await client.execute(uri: "/pairing.png?database=elsewhere", method: .get) { response in
                    #expect(response.status == .notFound)
                }
            }
        }
    }
}
