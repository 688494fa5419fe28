import EdgeGatewayTestSupport
import EdgeIdentity
import Logging
import NIOSSL
import Testing

/// Trust policies enforced during real TLS handshakes over loopback sockets.
@Suite struct ServerTrustOverTLSTests {
    let logger = Logger(label: "EdgeIdentityTests", factory: { _ in SwiftLogNoOpLogHandler() })

    @Test func correctPinConnectsAndEchoes() async throws {
        let temporary = try TemporaryDirectory()
        let identity = try TLSIdentity.loadOrCreateSelfSigned(
            directory: temporary.path,
            commonName: "edge-01",
            logger: logger
        )
        let clientTLS = try ServerTrustPolicy.pinned(fingerprint: identity.sha256Fingerprint.colonHex)
            .clientTLSConfiguration()

        let attempt = try await TLSEchoServer.with(configuration: try identity.serverTLSConfiguration()) { server in
            try await TLSEchoClient.exchange(
                port: server.port,
                clientTLS: clientTLS,
                serverHostname: "127.0.0.1"
            )
        }

        #expect(try attempt.reply.get() == "ping")
        #expect(attempt.trustError == nil)
    }

    @Test func wrongPinFailsAndNamesBothFingerprints() async throws {
        let temporary = try TemporaryDirectory()
        let identity = try TLSIdentity.loadOrCreateSelfSigned(
            directory: temporary.path,
            commonName: "edge-01",
            logger: logger
        )
        let expectedPeer = try TestPKI.makeLeaf(commonName: "edge-01")
        let clientTLS = try ServerTrustPolicy.pinned(certificateDER: expectedPeer.derBytes)
            .clientTLSConfiguration()

        let attempt = try await TLSEchoServer.with(configuration: try identity.serverTLSConfiguration()) { server in
            try await TLSEchoClient.exchange(
                port: server.port,
                clientTLS: clientTLS,
                serverHostname: "edge-01"
            )
        }

        #expect(!attempt.succeeded)
        let expected = CertificateFingerprint(derBytes: try expectedPeer.derBytes, algorithm: .sha256)
            .colonHex
        #expect(
            attempt.trustError
                == .pinMismatch(expected: expected, presented: identity.sha256Fingerprint.colonHex)
        )
        let message = try #require(attempt.trustError).description
        #expect(message.contains(expected) && message.contains(identity.sha256Fingerprint.colonHex))
    }

    @Test func selfSignedOnlyAcceptsASelfSignedServer() async throws {
        let temporary = try TemporaryDirectory()
        let identity = try TLSIdentity.loadOrCreateSelfSigned(
            directory: temporary.path,
            commonName: "edge-01",
            logger: logger
        )
        let clientTLS = try ServerTrustPolicy.selfSignedOnly.clientTLSConfiguration()

        let attempt = try await TLSEchoServer.with(configuration: try identity.serverTLSConfiguration()) { server in
            // The certificate does not name 127.0.0.1; this policy must not care.
            try await TLSEchoClient.exchange(
                port: server.port,
                clientTLS: clientTLS,
                serverHostname: "127.0.0.1"
            )
        }

        #expect(try attempt.reply.get() == "ping")
    }

    @Test func selfSignedOnlyRefusesACASignedServer() async throws {
        let temporary = try TemporaryDirectory()
        let ca = try TestPKI.makeCA(commonName: "Test CA")
        let server = try TestPKI.makeLeaf(commonName: "sg", dnsNames: ["localhost"], issuer: ca)
        let identity = try server.identity(in: temporary, name: "server")
        let clientTLS = try ServerTrustPolicy.selfSignedOnly.clientTLSConfiguration()

        let attempt = try await TLSEchoServer.with(configuration: try identity.serverTLSConfiguration()) { server in
            try await TLSEchoClient.exchange(
                port: server.port,
                clientTLS: clientTLS,
                serverHostname: "localhost"
            )
        }

        #expect(!attempt.succeeded)
        #expect(attempt.trustError == .notSelfSigned(subject: "CN=sg", issuer: "CN=Test CA"))
    }

    @Test func caPolicyAcceptsACASignedServerWithAMatchingHostname() async throws {
        let temporary = try TemporaryDirectory()
        let ca = try TestPKI.makeCA(commonName: "Test CA")
        let identity = try TestPKI.makeLeaf(commonName: "sg", dnsNames: ["localhost"], issuer: ca)
            .identity(in: temporary, name: "server")
        let clientTLS = try ServerTrustPolicy.ca(roots: [ca.certificate], checkHostname: true)
            .clientTLSConfiguration()

        let attempt = try await TLSEchoServer.with(configuration: try identity.serverTLSConfiguration()) { server in
            try await TLSEchoClient.exchange(
                port: server.port,
                clientTLS: clientTLS,
                serverHostname: "localhost"
            )
        }

        #expect(try attempt.reply.get() == "ping")
    }

    @Test func caPolicyRefusesAMismatchedHostname() async throws {
        let temporary = try TemporaryDirectory()
        let ca = try TestPKI.makeCA(commonName: "Test CA")
        let identity = try TestPKI.makeLeaf(commonName: "sg", dnsNames: ["localhost"], issuer: ca)
            .identity(in: temporary, name: "server")
        let clientTLS = try ServerTrustPolicy.ca(roots: [ca.certificate], checkHostname: true)
            .clientTLSConfiguration()

        let attempt = try await TLSEchoServer.with(configuration: try identity.serverTLSConfiguration()) { server in
            try await TLSEchoClient.exchange(
                port: server.port,
                clientTLS: clientTLS,
                serverHostname: "sg.example"
            )
        }

        #expect(!attempt.succeeded)
        #expect(
            attempt.trustError
                == .hostnameMismatch(expected: "sg.example", certificateNames: ["localhost"])
        )
    }

    @Test func caPolicyRefusesAServerFromAnUnknownCA() async throws {
        let temporary = try TemporaryDirectory()
        let trustedCA = try TestPKI.makeCA(commonName: "Test CA")
        let otherCA = try TestPKI.makeCA(commonName: "Other CA")
        let identity = try TestPKI.makeLeaf(commonName: "sg", dnsNames: ["localhost"], issuer: otherCA)
            .identity(in: temporary, name: "server")
        let clientTLS = try ServerTrustPolicy.ca(roots: [trustedCA.certificate], checkHostname: true)
            .clientTLSConfiguration()

        let attempt = try await TLSEchoServer.with(configuration: try identity.serverTLSConfiguration()) { server in
            try await TLSEchoClient.exchange(
                port: server.port,
                clientTLS: clientTLS,
                serverHostname: "localhost"
            )
        }

        #expect(!attempt.succeeded)
        guard case .untrustedChain(_, let issuer, _) = attempt.trustError else {
            Issue.record("unexpected trust error \(String(describing: attempt.trustError))")
            return
        }
        #expect(issuer == "CN=Other CA")
    }

    @Test func pinnedConfigurationWithoutTheCallbackFailsClosed() async throws {
        let temporary = try TemporaryDirectory()
        let identity = try TLSIdentity.loadOrCreateSelfSigned(
            directory: temporary.path,
            commonName: "edge-01",
            logger: logger
        )
        let clientTLS = try ServerTrustPolicy.pinned(certificateDER: identity.derBytes)
            .clientTLSConfiguration()
        let context = try NIOSSLContext(configuration: clientTLS.tlsConfiguration)

        let succeeded = try await TLSEchoServer.with(
            configuration: try identity.serverTLSConfiguration()
        ) { server in
            try await TLSEchoClient.exchangeWithoutPolicyCallback(port: server.port, context: context)
        }

        #expect(!succeeded)
    }
}
