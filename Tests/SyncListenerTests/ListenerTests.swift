import EdgeConfig
import EdgeCredentials
import EdgeGatewayTestSupport
import EdgeIdentity
import Foundation
import HummingbirdWSClient
import Logging
import NIOSSL
import ReplicationProtocol
import SyncJSON
import SyncListener
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite("The sync listener's HTTP side")
struct ListenerTests {
    /// A plain GET with optional Basic credentials, returning status, headers and body.
    static func get(
        _ path: String, port: Int, credentials: String? = nil
    ) async throws -> (status: Int, wwwAuthenticate: String?, body: Data) {
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)\(path)")!)
        if let credentials {
            request.setValue(
                "Basic " + Data(credentials.utf8).base64EncodedString(), forHTTPHeaderField: "Authorization")
        }
        let (body, response) = try await URLSession.shared.data(for: request)
        let http = try #require(response as? HTTPURLResponse)
        return (http.statusCode, http.value(forHTTPHeaderField: "WWW-Authenticate"), body)
    }

    @Test("bad or missing Basic credentials get 401 with WWW-Authenticate; the right ones replicate")
    func basicAuthentication() async throws {
        try await TestGateway.run(settings: TestGateway.settings(authentication: TestGateway.users)) { gateway in
            for credentials in [nil, "alice:wrong", "bob:s3cret", "garbage"] {
                let response = try await Self.get("/db/_blipsync", port: gateway.port, credentials: credentials)
                #expect(response.status == 401)
                #expect(response.wwwAuthenticate == #"Basic charset="UTF-8""#)
            }
            await #expect(throws: (any Error).self) {
                try await ActivePeer.connect(port: gateway.port, credentials: ("alice", "wrong")) { _ in }
            }
            try await ActivePeer.connect(port: gateway.port, credentials: ("alice", "s3cret")) { peer in
                let missing = try await peer.errorReply(for: GetCheckpointRequest(client: "cp"))
                #expect(missing?.code == 404)
            }
            let status = await gateway.listener.status()
            #expect(status.totalConnections == 1)
            #expect(status.databases.first?.totalConnections == 1)
            try await eventually("the connection to close") { await gateway.listener.status().activeConnections == 0 }
        }
    }

    @Test("unknown database 404, plain GET of _blipsync 400, server and database info")
    func httpErrorsAndInfo() async throws {
        try await TestGateway.run { gateway in
            #expect(try await Self.get("/nope/_blipsync", port: gateway.port).status == 404)
            let plain = try await Self.get("/db/_blipsync", port: gateway.port)
            #expect(plain.status == 400, "\(String(decoding: plain.body, as: UTF8.self))")
            await #expect(throws: (any Error).self) {
                try await ActivePeer.connect(port: gateway.port, database: "nope") { _ in }
            }
            let root = try await Self.get("/", port: gateway.port)
            let info = try JSONValue(parsing: Array(root.body)).objectValue
            #expect(info?["couchdb"] == "Welcome")
            #expect(info?["vendor"]?.objectValue?["name"] == "EdgeGateway")
            try await gateway.database.save("doc", body: Data("{}".utf8), parentRevID: nil)
            let database = try JSONValue(parsing: Array(try await Self.get("/db", port: gateway.port).body)).objectValue
            #expect(database?["db_name"] == "db")
            #expect(database?["update_seq"] == 1)
        }
    }

    @Test("a full listener refuses with 503")
    func maxConnections() async throws {
        try await TestGateway.run(settings: TestGateway.settings(maxConnections: 1)) { gateway in
            try await ActivePeer.connect(port: gateway.port) { _ in
                try await eventually("the first connection") { await gateway.listener.status().activeConnections == 1 }
                #expect(try await Self.get("/db/_blipsync", port: gateway.port).status == 503)
            }
        }
    }

    @Test("a self-signed TLS listener serves wss; a client pinning it connects, before and after a restart")
    func selfSignedTLS() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("edge-tls-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let settings = TestGateway.settings(tls: .selfSigned)
        var pin: ServerTrustPolicy?
        for _ in 0..<2 {
            try await TestGateway.run(settings: settings, dataDirectory: directory) { [pin] gateway in
                let identity = try TLSIdentity.loadOrCreateSelfSigned(
                    directory: directory.appendingPathComponent("identity").path, commonName: "test-node",
                    logger: testLogger)
                // The first run pins the generated certificate; the restarted listener must present it again.
                try await pinnedHandshake(port: gateway.port, policy: pin ?? .pinned(certificateDER: identity.derBytes))
                await #expect(throws: (any Error).self) {
                    try await pinnedHandshake(
                        port: gateway.port, policy: .pinned(certificateDER: Array(repeating: 1, count: 64)))
                }
                // The WebSocket client cannot take a pinning callback; trust was checked just above.
                var tls = TLSConfiguration.makeClientConfiguration()
                tls.certificateVerification = .none
                try await ActivePeer.connect(port: gateway.port, tls: tls) { peer in
                    let missing = try await peer.errorReply(for: GetCheckpointRequest(client: "cp"))
                    #expect(missing?.code == 404)
                }
            }
            if pin == nil {
                let identity = try TLSIdentity.loadOrCreateSelfSigned(
                    directory: directory.appendingPathComponent("identity").path, commonName: "test-node",
                    logger: testLogger)
                pin = .pinned(certificateDER: identity.derBytes)
            }
        }
    }
}
