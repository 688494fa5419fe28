import EdgeGatewayTestSupport
import EdgeIdentity
import Logging
import Testing

/// A listener that requires client certificates, over real TLS on loopback.
@Suite struct ClientCertificateListenerTests {
    let logger = Logger(label: "EdgeIdentityTests", factory: { _ in SwiftLogNoOpLogHandler() })

    /// Runs one exchange against a listener trusting `clientCA`, the client presenting `clientIdentity`.
    private func exchange(trusting clientCA: TestCertificate, clientIdentity: TLSIdentity?)
        async throws -> EchoAttempt
    {
        let temporary = try TemporaryDirectory()
        let serverIdentity = try TLSIdentity.loadOrCreateSelfSigned(
            directory: temporary.path,
            commonName: "edge-01",
            logger: logger
        )
        let serverConfiguration = try serverIdentity.serverTLSConfiguration(
            clientAuthentication: .required(trustedRoots: [clientCA.certificate])
        )
        let clientTLS = try ServerTrustPolicy.pinned(certificateDER: serverIdentity.derBytes)
            .clientTLSConfiguration(clientIdentity: clientIdentity)
        return try await TLSEchoServer.with(configuration: serverConfiguration) { server in
            try await TLSEchoClient.exchange(
                port: server.port,
                clientTLS: clientTLS,
                serverHostname: "edge-01"
            )
        }
    }

    @Test func clientWithACertificateFromTheTrustedCAIsAccepted() async throws {
        let temporary = try TemporaryDirectory()
        let clientCA = try TestPKI.makeCA(commonName: "Clients CA")
        let client = try TestPKI.makeLeaf(
            commonName: "phone-7",
            dnsNames: ["phone-7"],
            issuer: clientCA
        )
        .identity(in: temporary, name: "client")

        let attempt = try await self.exchange(trusting: clientCA, clientIdentity: client)

        #expect(try attempt.reply.get() == "ping")
    }

    @Test func clientWithACertificateFromAnotherCAIsRefused() async throws {
        let temporary = try TemporaryDirectory()
        let clientCA = try TestPKI.makeCA(commonName: "Clients CA")
        let otherCA = try TestPKI.makeCA(commonName: "Other CA")
        let client = try TestPKI.makeLeaf(commonName: "phone-7", dnsNames: ["phone-7"], issuer: otherCA)
            .identity(in: temporary, name: "client")

        let attempt = try await self.exchange(trusting: clientCA, clientIdentity: client)

        #expect(!attempt.succeeded)
        // The client trusted the server; the refusal came from the listener.
        #expect(attempt.trustError == nil)
    }

    @Test func clientWithoutACertificateIsRefused() async throws {
        let clientCA = try TestPKI.makeCA(commonName: "Clients CA")

        let attempt = try await self.exchange(trusting: clientCA, clientIdentity: nil)

        #expect(!attempt.succeeded)
        #expect(attempt.trustError == nil)
    }

    @Test func listenerWithoutClientAuthenticationAcceptsAnonymousClients() async throws {
        let temporary = try TemporaryDirectory()
        let serverIdentity = try TLSIdentity.loadOrCreateSelfSigned(
            directory: temporary.path,
            commonName: "edge-01",
            logger: logger
        )
        let clientTLS = try ServerTrustPolicy.selfSignedOnly.clientTLSConfiguration()

        let attempt = try await TLSEchoServer.with(
            configuration: try serverIdentity.serverTLSConfiguration()
        ) { server in
            try await TLSEchoClient.exchange(port: server.port, clientTLS: clientTLS, serverHostname: nil)
        }

        #expect(try attempt.reply.get() == "ping")
    }
}
