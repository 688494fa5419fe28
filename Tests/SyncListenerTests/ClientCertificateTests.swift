import Crypto
import EdgeConfig
import Foundation
import NIOSSL
import ReplicationProtocol
import Testing
import X509

@Suite("Listener TLS with certificate files and client certificates")
struct ClientCertificateTests {
    /// A certificate and its key, issued by `issuer` (or self-issued as a CA when `issuer` is nil).
    struct IssuedCertificate {
        let certificate: Certificate
        let key: P256.Signing.PrivateKey

        init(commonName: String, issuer: IssuedCertificate?, dnsNames: [String] = []) throws {
            key = P256.Signing.PrivateKey()
            let subject = try DistinguishedName { CommonName(commonName) }
            let isAuthority = issuer == nil
            let publicKey = Certificate.PublicKey(key.publicKey)
            certificate = try Certificate(
                version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: publicKey,
                notValidBefore: Date() - 3600, notValidAfter: Date() + 86400,
                issuer: issuer?.certificate.subject ?? subject, subject: subject,
                signatureAlgorithm: .ecdsaWithSHA256,
                extensions: try Certificate.Extensions {
                    if isAuthority {
                        Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                        Critical(KeyUsage(keyCertSign: true))
                    } else {
                        Critical(BasicConstraints.notCertificateAuthority)
                        Critical(KeyUsage(digitalSignature: true))
                        try ExtendedKeyUsage([.serverAuth, .clientAuth])
                        if !dnsNames.isEmpty {
                            SubjectAlternativeNames(dnsNames.map { .dnsName($0) })
                        }
                    }
                },
                issuerPrivateKey: .init(issuer?.key ?? key))
        }

        /// Writes the certificate and its key (mode 0600) as PEM files in `directory`; returns their paths.
        func writePEMFiles(in directory: URL, named name: String) throws -> (certificate: String, key: String) {
            let certificatePath = directory.appendingPathComponent("\(name).pem").path
            let keyPath = directory.appendingPathComponent("\(name)-key.pem").path
            try certificate.serializeAsPEM().pemString.write(toFile: certificatePath, atomically: true, encoding: .utf8)
            try key.pemRepresentation.write(toFile: keyPath, atomically: true, encoding: .utf8)
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: keyPath)
            return (certificatePath, keyPath)
        }

        func clientTLS() throws -> TLSConfiguration {
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.certificateVerification = .none
            tls.certificateChain = [.certificate(try NIOSSLCertificate(bytes: try certificate.serializeAsPEM().derBytes, format: .der))]
            tls.privateKey = .privateKey(try NIOSSLPrivateKey(bytes: Array(key.pemRepresentation.utf8), format: .pem))
            return tls
        }
    }

    @Test("a listener with PEM certificate files is verified by a client trusting their CA")
    func pemFiles() async throws {
        let authority = try IssuedCertificate(commonName: "Test CA", issuer: nil)
        let server = try IssuedCertificate(commonName: "gateway", issuer: authority)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("edge-pem-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let certificatePath = directory.appendingPathComponent("cert.pem").path
        let keyPath = directory.appendingPathComponent("key.pem").path
        try server.certificate.serializeAsPEM().pemString.write(toFile: certificatePath, atomically: true, encoding: .utf8)
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
        let stranger = try IssuedCertificate(commonName: "stranger", issuer: try IssuedCertificate(commonName: "Other CA", issuer: nil))
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
