import BLIPCodec
import EdgeConfig
import EdgeCredentials
import EdgeGatewayTestSupport
import EdgeIdentity
import Foundation
import NIOSSL
import ReplicationProtocol
import Testing

@testable import SyncListener

/// Nobody gets in who does not belong: credentials on every path to documents, TLS 1.2 or later only, a plain
/// request to the TLS port closed, no way from a document ID or blob digest to a file outside the store, no secret
/// in any log line, and no start with a private key others can read.
@Suite("Hostile input: authentication and TLS")
struct AuthAndTLSTests {
    /// Runs `openssl s_client` against the listener with `arguments`; returns its exit status and output.
    static func sClient(port: Int, _ arguments: [String]) async throws -> (status: Int32, output: String) {
        try await onOwnThread { try runSClient(port: port, arguments) }
    }

    private static func runSClient(port: Int, _ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = SpawnedProcess()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments =
            ["openssl", "s_client", "-connect", "127.0.0.1:\(port)", "-servername", "localhost"] + arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    @Test("TLS 1.0 and 1.1 handshakes are refused by the listener (openssl s_client); TLS 1.2 and 1.3 succeed")
    func oldTLSVersionsRefused() async throws {
        try await TestGateway.run(settings: TestGateway.settings(tls: .selfSigned)) { gateway in
            // Security level 0 lets this OpenSSL offer the old versions, so the refusal seen is the listener's.
            for version in ["-tls1", "-tls1_1"] {
                let (status, output) = try await Self.sClient(
                    port: gateway.port, [version, "-cipher", "DEFAULT:@SECLEVEL=0"])
                #expect(status != 0, "\(version) was accepted:\n\(output)")
                #expect(
                    output.contains("alert protocol version") || output.contains("unsupported protocol"),
                    "\(version): no protocol-version refusal in:\n\(output)")
                #expect(!output.contains("BEGIN CERTIFICATE"), "\(version) got as far as the certificate")
            }
            for (version, name) in [("-tls1_2", "TLSv1.2"), ("-tls1_3", "TLSv1.3")] {
                let (status, output) = try await Self.sClient(port: gateway.port, [version])
                #expect(
                    status == 0 && output.contains("Protocol  : \(name)") || output.contains("New, \(name)"),
                    "\(version) failed:\n\(output)")
            }
        }
    }

    @Test("a plain HTTP request to the TLS port is closed cleanly; the listener keeps serving TLS")
    func plainRequestToTLSPort() async throws {
        try await TestGateway.run(settings: TestGateway.settings(tls: .selfSigned)) { gateway in
            let exchange = try await RawExchange.run(
                port: gateway.port, chunks: HostileInputTests.upgrade(), quietFor: .seconds(5))
            #expect(exchange.closedByServer)
            #expect(exchange.status == nil, "answered in plain HTTP: \(exchange.head)")
            let (status, _) = try await Self.sClient(port: gateway.port, ["-tls1_2"])
            #expect(status == 0)
            #expect(await gateway.listener.status().activeConnections == 0)
        }
    }

    @Test("with auth on, no path of the listener reads or writes a document without valid credentials")
    func noDocumentsWithoutCredentials() async throws {
        let marker = "top-secret-\(UUID().uuidString)"
        try await TestGateway.run(settings: TestGateway.settings(authentication: TestGateway.users)) { gateway in
            let database = try await gateway.database
            try await database.save("doc1", body: Data(#"{"secret":"\#(marker)"}"#.utf8), parentRevID: nil)
            let before = try await database.lastSequence()
            var requests: [[[UInt8]]] = []
            // Every REST route (on by default, read-write, when auth is on), the blob route and the upgrade path.
            let paths = [
                "/", "/db", "/db/", "/db/doc1", "/db/doc1?rev=1-x", "/db/_all_docs", "/db/_changes", "/db/doc1/file",
                "/db/_blipsync", "/db/_local/x", "/db/_bulk_docs", "/db/_bulk_get", "/db/_revs_diff", "/_openapi.json",
                "/db._default._default/doc1",
            ]
            for path in paths {
                for method in ["GET", "PUT", "POST", "DELETE"] {
                    let body = method == "GET" || method == "DELETE" ? "" : #"{"secret":"overwritten"}"#
                    requests.append(
                        HostileInputTests.http(
                            "\(method) \(path) HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
                        ))
                }
            }
            requests.append(HostileInputTests.upgrade())
            requests.append(HostileInputTests.upgrade(adding: HostileInputTests.basic("alice:wrong")))
            for request in requests {
                // Every request asks for `Connection: close`, so the exchange ends when the answer does; the long
                // quiet period only bounds a node that fails to answer. The default 2 s was exceeded (no status)
                // on a machine running the whole suite.
                let exchange = try await RawExchange.run(port: gateway.port, chunks: request, quietFor: .seconds(15))
                let text = String(decoding: exchange.received, as: UTF8.self)
                #expect(
                    !text.contains(marker),
                    "\(String(decoding: request[0].prefix(40), as: UTF8.self)) read the document")
                let requestLine = String(decoding: request[0].prefix(while: { $0 != 0x0D }), as: UTF8.self)
                if requestLine.hasPrefix("GET / ") {
                    #expect(
                        exchange.status == 200 && text.contains("\"couchdb\""), "\(requestLine) got \(exchange.head)")
                } else {
                    // 401 where a route exists; 404 or 405 where none does for the method, before any lookup.
                    #expect(
                        [401, 404, 405].contains(exchange.status ?? 0), "\(requestLine) got \(exchange.status ?? 0)")
                }
            }
            #expect(try await database.lastSequence() == before)
            #expect(try await database.lastSequence() > 0)
        }
    }

    @Test("document IDs and blob digests cannot name files outside the blob store")
    func noPathsFromIDs() async throws {
        let outside = FileManager.default.temporaryDirectory.appendingPathComponent("edge-escape-\(UUID().uuidString)")
        try await TestGateway.run { gateway in
            try await ActivePeer.connect(port: gateway.port) { peer in
                let escapes = [
                    "../../../../\(outside.path)", "/\(outside.path)", "..\\..\\x", "%2e%2e%2f%2e%2e%2fx",
                    "_attachments/../../x", "\u{0}../x",
                ]
                for (index, docID) in escapes.enumerated() {
                    let body =
                        #"{"file":{"@type":"blob","digest":"sha1-../../../../\#(outside.lastPathComponent)","length":3}}"#
                    let message = BLIPMessage.request(
                        profile: "rev",
                        properties: ["id": docID, "rev": "1-\(index)a", "sequence": "\(index + 1)"],
                        body: Array(body.utf8))
                    _ = try? await peer.connection.sendRequest(message)
                }
                for digest in [
                    "sha1-../../../../etc/passwd", "sha1-/etc/passwd", "../../etc/passwd",
                    "sha1-" + String(repeating: "A", count: 27) + "/", "sha1-..%2F..%2Fetc%2Fpasswd=====",
                ] {
                    do {
                        _ = try await peer.connection.sendRequest(
                            .request(profile: "getAttachment", properties: ["digest": digest, "docID": "doc1"]))
                        Issue.record("getAttachment \(digest) was answered")
                    } catch let error as BLIPErrorReply {
                        #expect(error.code == 400 || error.code == 404, "\(digest): \(error)")
                    }
                }
            }
            #expect(!FileManager.default.fileExists(atPath: outside.path))
            // Everything the store wrote is inside its data directory, and blobs only under their hex names.
            let blobs = try FileManager.default.subpathsOfDirectory(atPath: gateway.dataDirectory.path)
            #expect(blobs.allSatisfy { !$0.contains("..") && !$0.contains("passwd") }, "\(blobs)")
        }
    }

    @Test("passwords, credentials and private keys never appear in the log, even at trace level")
    func noSecretsInLogs() async throws {
        let logs = LogRecorder()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("edge-logs-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let wrongPassword = "guess-\(UUID().uuidString)"
        for tls in [ListenerTLS.off, .selfSigned] {
            try await TestGateway.run(
                settings: TestGateway.settings(tls: tls, authentication: TestGateway.users), dataDirectory: directory,
                logger: logs.logger(level: .trace)
            ) { gateway in
                var configuration = TLSConfiguration.makeClientConfiguration()
                configuration.certificateVerification = .none
                let tlsConfiguration = tls == .selfSigned ? configuration : nil
                try await ActivePeer.connect(
                    port: gateway.port, tls: tlsConfiguration, credentials: ("alice", "s3cret")
                ) { peer in
                    try await ListenerResourceLimitTests.expectAnswered(by: peer)
                }
                await #expect(throws: (any Error).self) {
                    try await ActivePeer.connect(
                        port: gateway.port, tls: tlsConfiguration, credentials: ("alice", wrongPassword)
                    ) { _ in }
                }
                if tls == .off {
                    _ = try await RawExchange.run(
                        port: gateway.port,
                        chunks: HostileInputTests.upgrade(adding: HostileInputTests.basic("alice:\(wrongPassword)")))
                }
            }
        }
        let keyPEM = try String(
            contentsOf: directory.appendingPathComponent("identity").appendingPathComponent(TLSIdentity.keyFileName),
            encoding: .utf8)
        let keyBody = keyPEM.split(separator: "\n").filter { !$0.hasPrefix("-----") }
        let secrets =
            [
                "s3cret", wrongPassword, Data("alice:s3cret".utf8).base64EncodedString(),
                Data("alice:\(wrongPassword)".utf8).base64EncodedString(), "PRIVATE KEY",
            ] + keyBody.map(String.init)
        let lines = logs.all
        #expect(lines.count > 20, "too few log lines to judge: \(lines.count)")
        for secret in secrets {
            #expect(
                !lines.contains { $0.contains(secret) },
                "a log line contains a secret: \(lines.first { $0.contains(secret) } ?? "")")
        }
    }

    @Test("a private key readable by others stops the listener's start with a clear error; created keys are 0600")
    func keyPermissions() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("edge-key-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        try await TestGateway.run(settings: TestGateway.settings(tls: .selfSigned), dataDirectory: directory) { _ in }
        let keyPath = directory.appendingPathComponent("identity").appendingPathComponent(TLSIdentity.keyFileName).path
        let mode = try FileManager.default.attributesOfItem(atPath: keyPath)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: keyPath)
        do {
            try await TestGateway.run(settings: TestGateway.settings(tls: .selfSigned), dataDirectory: directory) { _ in
                Issue.record("the listener started with a world-readable key")
            }
        } catch let error as SyncListenerError {
            #expect("\(error)".contains(keyPath) && "\(error)".contains("chmod 600"), "\(error)")
        }
    }
}
