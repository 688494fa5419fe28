import EdgeConfig
import EdgeGatewayTestSupport
import EdgeIdentity
import EdgeReplication
import EdgeStore
import Foundation
import GatewayConfigurationFile
import Hummingbird
import HummingbirdTesting
import Logging
import Testing
import UpstreamDialer

@testable import EdgeGatewayApp

/// Certificate files and the trust store changed under a running gateway, over real TLS sockets.
@Suite("Reloading certificate files and the trust store")
struct FileReloadTests {
    /// A generated identity's PEM files, in a directory of their own.
    struct IdentityFiles {
        let certificate: String
        let key: String
        let identity: TLSIdentity

        init(in directory: URL, name: String) throws {
            let folder = directory.appendingPathComponent(name).path
            identity = try TLSIdentity.loadOrCreateSelfSigned(
                directory: folder, commonName: name, logger: Logger(label: "test"))
            certificate = "\(folder)/\(TLSIdentity.certificateFileName)"
            key = "\(folder)/\(TLSIdentity.keyFileName)"
        }

        var sha256: String { CertificateFingerprint(derBytes: identity.derBytes, algorithm: .sha256).colonHex }
    }

    /// Replaces `path` with `source`'s contents the way deployment tools do: a new file renamed over the old.
    static func replace(_ path: String, with source: String) throws {
        let temporary = path + ".new"
        try FileManager.default.copyItem(atPath: source, toPath: temporary)
        guard rename(temporary, path) == 0 else { throw POSIXError(.EIO) }
    }

    @Test("tls = \"file\": new connections get a replaced certificate, pairing follows; broken files are refused")
    func certificateFilesReload() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "edge-reload-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let first = try IdentityFiles(in: directory, name: "first")
        let second = try IdentityFiles(in: directory, name: "second")
        let served = directory.appendingPathComponent("served")
        try FileManager.default.createDirectory(at: served, withIntermediateDirectories: true)
        let certificate = served.appendingPathComponent("gateway.crt").path
        let key = served.appendingPathComponent("gateway.key").path
        try FileManager.default.copyItem(atPath: first.certificate, toPath: certificate)
        try FileManager.default.copyItem(atPath: first.key, toPath: key)

        try await withTemporaryGateway(
            listeners: [
                GatewayTOML.listener(tls: "file").setting("tls_certificate", .string(certificate)).setting(
                    "tls_key", .string(key))
            ]
        ) { application in
            try await application.test(.live) { client in
                let port = try await UpstreamTests.listenerPort(client)
                #expect(try await Self.pairingSHA256(client) == first.sha256)
                #expect(
                    try await pushDocuments(port: port, pinning: first.identity, documents: 1, prefix: "a").completed
                        == 1)

                try Self.replace(key, with: second.key)
                try Self.replace(certificate, with: second.certificate)
                try await Self.waitFor("the pairing payload to pin the new certificate") {
                    try await Self.pairingSHA256(client) == second.sha256
                }
                try await UpstreamTests.waitFor(.listener, in: client) { $0.status == .up }
                #expect(
                    try await pushDocuments(port: port, pinning: second.identity, documents: 1, prefix: "b").completed
                        == 1)
                let refusal = await dialError {
                    _ = try await pushDocuments(port: port, pinning: first.identity, documents: 1, prefix: "c")
                }
                guard case .serverCertificateRejected = refusal else {
                    Issue.record("expected the old pin to be refused, got \(String(describing: refusal))")
                    return
                }

                try Data("not a certificate".utf8).write(to: URL(fileURLWithPath: certificate), options: .atomic)
                let degraded = try await UpstreamTests.waitFor(.listener, in: client) { $0.status == .degraded }
                #expect(degraded.reason?.hasPrefix("certificate files refused: ") == true)
                #expect(degraded.reason?.hasSuffix("the certificate loaded before is still served") == true)
                #expect(
                    try await pushDocuments(port: port, pinning: second.identity, documents: 1, prefix: "d").completed
                        == 1)
                #expect(try await Self.pairingSHA256(client) == second.sha256)
            }
        }
    }

    @Test("server_trust = \"trust-store\": an upstream refused for its pin syncs once the trust store is corrected")
    func trustStoreReload() async throws {
        try await withTemporaryGateway(listeners: [PairingEndpointTests.tlsListener]) { hub in
            try await hub.test(.live) { hubClient in
                let port = try await UpstreamTests.listenerPort(hubClient)
                let hubSHA256 = try #require(try await Self.pairingSHA256(hubClient))
                let wrong = try IdentityFiles(
                    in: FileManager.default.temporaryDirectory.appendingPathComponent(
                        "edge-wrong-\(UUID().uuidString)"),
                    name: "wrong")

                let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
                    "edge-gateway-\(UUID().uuidString)")
                defer { try? FileManager.default.removeItem(at: directory) }
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
                let trustStore = TrustedPeerStore(dataDirectory: directory.path)
                let endpoint = TrustedPeerStore.endpoint(host: "127.0.0.1", port: port)
                try trustStore.add(
                    .init(
                        endpoint: endpoint, sha256: try CertificateFingerprint(hexString: wrong.sha256), label: "wrong")
                )
                try await withTemporaryGateway(
                    upstreams: [
                        GatewayTOML.upstream(url: "wss://127.0.0.1:\(port)/inventory", type: "pull").setting(
                            "server_trust", "trust-store")
                    ],
                    dataDirectory: directory
                ) { edge in
                    try await edge.test(.live) { edgeClient in
                        let refused = try await UpstreamTests.waitFor(.upstream, in: edgeClient) { $0.status == .down }
                        #expect(refused.reason?.contains("certificate") == true, "\(refused.reason ?? "")")

                        _ = try trustStore.remove(endpoint: endpoint)
                        try trustStore.add(
                            .init(
                                endpoint: endpoint, sha256: try CertificateFingerprint(hexString: hubSHA256),
                                label: "hub"))
                        let synced = try await UpstreamTests.waitFor(.upstream, in: edgeClient) {
                            $0.status == .up && $0.details["lastSuccess"] != HealthValue.none
                        }
                        #expect(synced.reason == nil)
                    }
                }
            }
        }
    }

    @Test("server_trust = \"trust-store\" without a pin yet: the node starts, the upstream waits for `trust add`")
    func trustStoreWithoutPinYet() async throws {
        try await withTemporaryGateway(listeners: [PairingEndpointTests.tlsListener]) { hub in
            try await hub.test(.live) { hubClient in
                let port = try await UpstreamTests.listenerPort(hubClient)
                let hubSHA256 = try #require(try await Self.pairingSHA256(hubClient))
                let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
                    "edge-gateway-\(UUID().uuidString)")
                defer { try? FileManager.default.removeItem(at: directory) }
                try await withTemporaryGateway(
                    upstreams: [
                        GatewayTOML.upstream(url: "wss://127.0.0.1:\(port)/inventory", type: "pull").setting(
                            "server_trust", "trust-store")
                    ],
                    dataDirectory: directory
                ) { edge in
                    try await edge.test(.live) { edgeClient in
                        let waiting = try await UpstreamTests.waitFor(.upstream, in: edgeClient) { $0.status == .down }
                        #expect(waiting.reason?.contains("run `edge-gateway trust add 127.0.0.1:\(port)`") == true)

                        let endpoint = TrustedPeerStore.endpoint(host: "127.0.0.1", port: port)
                        try TrustedPeerStore(dataDirectory: directory.path).add(
                            .init(
                                endpoint: endpoint, sha256: try CertificateFingerprint(hexString: hubSHA256),
                                label: "hub"))
                        let synced = try await UpstreamTests.waitFor(.upstream, in: edgeClient) {
                            $0.status == .up && $0.details["lastSuccess"] != HealthValue.none
                        }
                        #expect(synced.reason == nil)
                    }
                }
            }
        }
    }

    static func pairingSHA256(_ client: some TestClientProtocol) async throws -> String? {
        try await client.execute(uri: "/pairing", method: .get) { response in
            let entries = try JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [[String: String]]
            return entries?.first?["sha256"]
        }
    }

    static func waitFor(_ what: String, _ condition: () async throws -> Bool) async throws {
        for _ in 0..<200 {
            if try await condition() { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        Issue.record("timed out waiting for \(what)")
        throw CancellationError()
    }
}

/// Pushes `documents` new documents from a fresh local database to `wss://127.0.0.1:port/inventory`, pinning
/// `identity`'s certificate as a paired device does.
func pushDocuments(
    port: Int, pinning identity: TLSIdentity, user: String? = nil, password: String? = nil, documents: Int,
    prefix: String
) async throws -> ActiveReplicator.Status {
    let local = FileManager.default.temporaryDirectory.appendingPathComponent("edge-device-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: local) }
    let store = try DocumentStore(dataDirectory: local)
    let database = try await store.database(named: "inventory")
    defer { try? database.close() }
    for index in 0..<documents {
        try await database.save("\(prefix)-\(index)", body: Data(#"{"n":\#(index)}"#.utf8), parentRevID: nil)
    }
    let replicator = ActiveReplicator(
        database: database,
        configuration: .init(
            remoteURL: "wss://127.0.0.1:\(port)/inventory",
            remoteUUID: "device",
            direction: .push,
            authentication: user.map { .basic(user: $0, password: password ?? "") } ?? .none,
            tls: try ServerTrustPolicy.pinned(certificateDER: identity.derBytes).clientTLSConfiguration()),
        logger: Logger(label: "device", factory: { _ in SwiftLogNoOpLogHandler() }))
    try await replicator.run()
    return await replicator.status()
}
