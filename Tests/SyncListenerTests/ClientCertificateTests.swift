import Crypto
import EdgeConfig
import EdgeGatewayTestSupport
import Foundation
import NIOSSL
import ReplicationProtocol
import Testing
import X509

@Suite("Listener TLS with certificate files and client certificates")
struct ClientCertificateTests {
    @Test("a listener with PEM certificate files is verified by a client trusting their CA")
    func pemFiles() async throws {
        let authority = try IssuedCertificate(commonName: "Test CA", issuer: nil)
        let server = try IssuedCertificate(commonName: "gateway", issuer: authority)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("edge-pem-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let certificatePath = directory.appendingPathComponent("cert.pem").path
        let keyPath = directory.appendingPathComponent("key.pem").path
        try server.certificate.serializeAsPEM().pemString.write(
            toFile: certificatePath, atomically: true, encoding: .utf8)
        try server.key.pemRepresentation.write(toFile: keyPath, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: keyPath)

        let settings = TestGateway.settings(tls: .pemFiles(certificate: certificatePath, privateKey: keyPath))
        try await TestGateway.run(settings: settings) { gateway in
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.trustRoots = .certificates([
                try NIOSSLCertificate(bytes: try authority.certificate.serializeAsPEM().derBytes, format: .der)
            ])
            tls.certificateVerification = .noHostnameVerification
            try await ActivePeer.connect(port: gateway.port, tls: tls) { peer in
                let missing = try await peer.errorReply(for: GetCheckpointRequest(client: "cp"))
                #expect(missing?.code == 404)
            }
        }
    }

    @Test("a client certificate issued by a trusted CA replicates; none, or a stranger's, fails the handshake")
    func clientCertificates() async throws {
        let authority = try IssuedCertificate(commonName: "Test CA", issuer: nil)
        let client = try IssuedCertificate(commonName: "client", issuer: authority)
        let stranger = try IssuedCertificate(
            commonName: "stranger", issuer: try IssuedCertificate(commonName: "Other CA", issuer: nil))
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("edge-ca-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let caPath = directory.appendingPathComponent("ca.pem").path
        try authority.certificate.serializeAsPEM().pemString.write(toFile: caPath, atomically: true, encoding: .utf8)

        let settings = TestGateway.settings(
            tls: .selfSigned, authentication: .clientCertificate(trustedCertificateAuthorities: [caPath]))
        try await TestGateway.run(settings: settings) { gateway in
            try await ActivePeer.connect(port: gateway.port, tls: try client.clientTLS()) { peer in
                let missing = try await peer.errorReply(for: GetCheckpointRequest(client: "cp"))
                #expect(missing?.code == 404)
            }
            var anonymous = TLSConfiguration.makeClientConfiguration()
            anonymous.certificateVerification = .none
            await #expect(throws: (any Error).self) {
                try await ActivePeer.connect(port: gateway.port, tls: anonymous) { _ in }
            }
            await #expect(throws: (any Error).self) {
                try await ActivePeer.connect(port: gateway.port, tls: try stranger.clientTLS()) { _ in }
            }
        }
    }
}
