import EdgeConfig
import EdgeGatewayTestSupport
import EdgeIdentity
import EdgeStore
import Foundation
import Synchronization
import Testing
import UpstreamDialer
import UpstreamStandIns

@testable import EdgeReplication

/// How the active replicator reaches an upstream: TLS under each server trust mode, every kind of credentials,
/// refusals classified as Couchbase Lite classifies them, endpoint resolvers and the heartbeat. Every test runs
/// over real loopback sockets against the project's own listener, or a scripted server where the listener
/// cannot misbehave as needed.
@Suite("Active replicator transport: trust, credentials, refusals, heartbeat")
struct UpstreamTransportTests {
    static let directoryPrefix = "edge-transport"

    /// Runs a one-shot push of three documents to `gateway` over `wss://host:port`; returns the local database.
    @discardableResult
    static func push(
        to gateway: TestGateway, scheme: String = "wss", host: String = "127.0.0.1",
        authentication: ActiveReplicator.Authentication = .none, tls: ClientTLSConfiguration?
    ) async throws -> ActiveReplicator.Status {
        var status = ActiveReplicator.Status()
        try await LocalDatabase.run { local in
            try await saveDocuments(3, prefix: "t", in: local.database)
            let replicator = ActiveReplicator(
                database: local.database,
                configuration: .init(
                    remoteURL: "\(scheme)://\(host):\(gateway.port)/\(TestGateway.databaseName)",
                    remoteUUID: "transport", direction: .push,
                    authentication: authentication, tls: tls),
                logger: testLogger)
            try await replicator.run()
            status = await replicator.status()
        }
        return status
    }

    static func selfSignedIdentity(of gateway: TestGateway) throws -> TLSIdentity {
        try TLSIdentity.loadOrCreateSelfSigned(
            directory: gateway.dataDirectory.appendingPathComponent("identity").path, commonName: "test-node",
            logger: testLogger)
    }

    @Test("self-signed-only accepts the listener's generated certificate and pushes")
    func selfSignedOnly() async throws {
        try await TestGateway.run(settings: TestGateway.settings(tls: .selfSigned)) { gateway in
            let status = try await Self.push(
                to: gateway, tls: try ServerTrustPolicy.selfSignedOnly.clientTLSConfiguration())
            #expect(status.completed == 3)
            #expect(try await gateway.database.document("t-2") != nil)
        }
    }

    @Test("a matching pin pushes; a wrong pin is refused, naming both fingerprints, and is not retried")
    func pinning() async throws {
        try await TestGateway.run(settings: TestGateway.settings(tls: .selfSigned)) { gateway in
            let identity = try Self.selfSignedIdentity(of: gateway)
            let pinned = try ServerTrustPolicy.pinned(certificateDER: identity.derBytes).clientTLSConfiguration()
            #expect(try await Self.push(to: gateway, tls: pinned).completed == 3)

            let wrongDigest = [UInt8](repeating: 0xAB, count: 32)
            let wrongPin = try ServerTrustPolicy.pinned(sha256: wrongDigest).clientTLSConfiguration()
            let error = await dialError { try await Self.push(to: gateway, tls: wrongPin) }
            guard case .serverCertificateRejected(.pinMismatch(let expected, let presented)) = error else {
                Issue.record("expected a pin mismatch, got \(String(describing: error))")
                return
            }
            #expect(expected.hasPrefix("AB:AB:AB"))
            #expect(presented == identity.sha256Fingerprint.colonHex)
            #expect(error?.description.contains(presented) == true)
            #expect(error?.isTransient == false)
        }
    }

    @Test("CA trust with a hostname check accepts a CA-signed listener by its name; self-signed-only refuses it")
    func certificateAuthority() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "\(Self.directoryPrefix)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let authority = try IssuedCertificate(commonName: "Site CA", issuer: nil)
        let server = try IssuedCertificate(
            commonName: "gateway", issuer: authority, dnsNames: ["localhost"])
        let serverFiles = try server.writePEMFiles(in: directory, named: "server")
        let settings = TestGateway.settings(
            tls: .pemFiles(certificate: serverFiles.certificate, privateKey: serverFiles.key))
        try await TestGateway.run(settings: settings) { gateway in
            let byCA = try ServerTrustPolicy.ca(roots: [authority.certificate], checkHostname: true)
                .clientTLSConfiguration()
            #expect(try await Self.push(to: gateway, host: "localhost", tls: byCA).completed == 3)

            let wrongName = await dialError { try await Self.push(to: gateway, host: "127.0.0.1", tls: byCA) }
            guard case .serverCertificateRejected(.hostnameMismatch) = wrongName else {
                Issue.record("expected a hostname mismatch, got \(String(describing: wrongName))")
                return
            }
            let selfSignedOnly = try ServerTrustPolicy.selfSignedOnly.clientTLSConfiguration()
            let notSelfSigned = await dialError { try await Self.push(to: gateway, tls: selfSignedOnly) }
            guard case .serverCertificateRejected(.notSelfSigned) = notSelfSigned else {
                Issue.record("expected a refusal of a CA-signed certificate, got \(String(describing: notSelfSigned))")
                return
            }
        }
    }

    @Test("Basic credentials push; a wrong password stops for good")
    func basicAuthentication() async throws {
        try await TestGateway.run(settings: TestGateway.settings(authentication: TestGateway.users)) { gateway in
            let status = try await Self.push(
                to: gateway, scheme: "ws", authentication: .basic(user: "alice", password: "s3cret"), tls: nil)
            #expect(status.completed == 3)
            let error = await dialError {
                try await Self.push(
                    to: gateway, scheme: "ws", authentication: .basic(user: "alice", password: "nope"), tls: nil)
            }
            // Our own listener's refusal, exactly as Couchbase Lite needs it to ask for credentials.
            guard case .upgradeRefused(_, 401, _, #"Basic charset="UTF-8""#, "Login required") = error else {
                Issue.record("expected a 401 with a Basic challenge, got \(String(describing: error))")
                return
            }
            #expect(error?.isTransient == false)
        }
    }

    @Test("a client certificate from the listener's CA pushes; without one the TLS handshake fails for good")
    func clientCertificate() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "\(Self.directoryPrefix)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let authority = try IssuedCertificate(commonName: "Device CA", issuer: nil)
        let client = try IssuedCertificate(commonName: "edge-02", issuer: authority)
        let authorityPath = directory.appendingPathComponent("ca.pem").path
        try authority.certificate.serializeAsPEM().pemString.write(
            toFile: authorityPath, atomically: true, encoding: .utf8)
        let clientFiles = try client.writePEMFiles(in: directory, named: "client")
        let clientIdentity = try TLSIdentity.load(
            certificatePEMFile: clientFiles.certificate, keyPEMFile: clientFiles.key)

        let settings = TestGateway.settings(
            tls: .selfSigned, authentication: .clientCertificate(trustedCertificateAuthorities: [authorityPath]))
        try await TestGateway.run(settings: settings) { gateway in
            let withCertificate = try ServerTrustPolicy.selfSignedOnly.clientTLSConfiguration(
                clientIdentity: clientIdentity)
            #expect(try await Self.push(to: gateway, tls: withCertificate).completed == 3)

            let anonymous = try ServerTrustPolicy.selfSignedOnly.clientTLSConfiguration()
            let error = await dialError { try await Self.push(to: gateway, tls: anonymous) }
            #expect(error != nil)
            #expect(error?.isTransient == false, "\(String(describing: error))")
        }
    }

    @Test("a closed port is unreachable, and transient")
    func unreachable() async throws {
        let error = try await withClosedLoopbackPort { closedPort in
            await dialError {
                try await LocalDatabase.run { local in
                    try await ActiveReplicator(
                        database: local.database,
                        configuration: .init(
                            remoteURL: "ws://127.0.0.1:\(closedPort)/db", remoteUUID: "u", direction: .push),
                        logger: testLogger
                    ).run()
                }
            }
        }
        guard case .unreachable = error else {
            Issue.record("expected unreachable, got \(String(describing: error))")
            return
        }
        #expect(error?.isTransient == true)
    }

    @Test("an endpoint resolver is asked before each connection, overrides the URL, and its error ends the run")
    func endpointResolver() async throws {
        struct NoEndpoint: Error {}
        try await withClosedLoopbackPort { closedPort in
            try await TestGateway.run { gateway in
                try await LocalDatabase.run { local in
                    try await saveDocuments(3, prefix: "t", in: local.database)
                    let calls = Mutex(0)
                    let replicator = ActiveReplicator(
                        database: local.database,
                        configuration: .init(
                            remoteURL: "ws://127.0.0.1:\(closedPort)/\(TestGateway.databaseName)",
                            endpointResolver: {
                                let call = calls.withLock { count in
                                    count += 1
                                    return count
                                }
                                guard call == 1 else { throw NoEndpoint() }
                                return .init(
                                    remoteURL: "ws://127.0.0.1:\(gateway.port)/\(TestGateway.databaseName)", tls: nil)
                            },
                            remoteUUID: "resolved", direction: .push),
                        logger: testLogger)
                    try await replicator.run()
                    #expect(await replicator.status().completed == 3)
                    await #expect(throws: NoEndpoint.self) { try await replicator.run() }
                    #expect(calls.withLock { $0 } == 2)
                }
            }
        }
    }

    @Test("plain ws:// to a TLS listener fails the handshake instead of hanging")
    func plainToTLS() async throws {
        try await TestGateway.run(settings: TestGateway.settings(tls: .selfSigned)) { gateway in
            let error = await dialError { try await Self.push(to: gateway, scheme: "ws", tls: nil) }
            #expect(error != nil)
        }
    }

    @Test("a 101 without our subprotocol, or with one not offered, is refused as Couchbase Lite refuses it")
    func subprotocolChecks() async throws {
        for chosen in [nil, "BLIP_3+CBMobile_9"] as [String?] {
            try await ScriptedUpgradeServer.run(answer: .upgrade(subprotocol: chosen)) { port in
                let dialer = UpstreamDialer(
                    target: try UpstreamTarget(url: "ws://127.0.0.1:\(port)/db/_blipsync"),
                    options: .init(subprotocols: ["BLIP_3+CBMobile_3", "BLIP_3+CBMobile_2"]), logger: testLogger)
                let error = await dialError { try await dialer.run { _ in } }
                #expect(
                    error == .subprotocolRejected(offered: ["BLIP_3+CBMobile_3", "BLIP_3+CBMobile_2"], chosen: chosen))
                #expect(error?.isTransient == false)
            }
        }
    }

    @Test("a refusal's status and body are reported; 401, 403 and 500 stop, 429 and 503 retry")
    func scriptedRefusals() async throws {
        let statuses = [
            ("500 Internal Server Error", false), ("401 Unauthorized", false), ("403 Forbidden", false),
            ("429 Too Many Requests", true), ("503 Service Unavailable", true),
        ]
        for (status, transient) in statuses {
            try await ScriptedUpgradeServer.run(answer: .refuse(status: status, body: "I only speak BLIP_3+CBMobile_4"))
            { port in
                let dialer = UpstreamDialer(
                    target: try UpstreamTarget(url: "ws://127.0.0.1:\(port)/db/_blipsync"),
                    options: .init(subprotocols: ["BLIP_3+CBMobile_3"]), logger: testLogger)
                let error = await dialError { try await dialer.run { _ in } }
                guard case .upgradeRefused(_, let code, _, _, let body) = error else {
                    Issue.record("expected a refusal, got \(String(describing: error))")
                    return
                }
                #expect("\(code)" == status.prefix(3))
                #expect(body == "I only speak BLIP_3+CBMobile_4")
                #expect(error?.isTransient == transient)
            }
        }
    }

    @Test("an upstream that stops answering is dropped within two heartbeats, and the run fails")
    func heartbeatTimeout() async throws {
        try await ScriptedUpgradeServer.run(answer: .upgrade(subprotocol: "BLIP_3+CBMobile_3")) { port in
            try await LocalDatabase.run { local in
                let replicator = ActiveReplicator(
                    database: local.database,
                    configuration: .init(
                        remoteURL: "ws://127.0.0.1:\(port)/db", remoteUUID: "silent", direction: .pull,
                        heartbeat: .seconds(1)),
                    logger: testLogger)
                let outcome = Task { try await replicator.run() }
                // Without the heartbeat the getCheckpoint request would wait forever: the server never answers.
                let watchdog = Task {
                    try await Task.sleep(for: .seconds(30))
                    outcome.cancel()
                }
                defer { watchdog.cancel() }
                await #expect(throws: (any Error).self) { try await outcome.value }
                #expect(!watchdog.isCancelled, "the connection was not dropped by the heartbeat")
                #expect(await replicator.status().lastError != nil)
            }
        }
    }
}
