import Crypto
import EdgeGatewayTestSupport
import EdgeIdentity
import Foundation
import Testing
import X509

/// The trust decision alone, without sockets.
@Suite struct ServerTrustEvaluationTests {
    @Test func pinMatchesOnlyTheExactCertificate() async throws {
        let pinned = try TestPKI.makeLeaf(commonName: "peer")
        let impostor = try TestPKI.makeLeaf(commonName: "peer")
        let policy = ServerTrustPolicy.pinned(certificateDER: try pinned.derBytes)

        #expect(
            await policy.evaluate(presentedChain: [pinned.certificate], serverHostname: nil).isSuccess
        )
        let result = await policy.evaluate(presentedChain: [impostor.certificate], serverHostname: nil)
        let expected = CertificateFingerprint(derBytes: try pinned.derBytes, algorithm: .sha256)
            .colonHex
        let presented = CertificateFingerprint(derBytes: try impostor.derBytes, algorithm: .sha256)
            .colonHex
        #expect(result.failure == .pinMismatch(expected: expected, presented: presented))
        #expect(result.failure?.description.contains(expected) == true)
        #expect(result.failure?.description.contains(presented) == true)
    }

    @Test func pinIgnoresExpiryAndNames() async throws {
        let key = P256.Signing.PrivateKey()
        let name = try DistinguishedName { CommonName("old-peer") }
        let expired = try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: .init(key.publicKey),
            notValidBefore: Date() - 10 * 86400,
            notValidAfter: Date() - 86400,
            issuer: name,
            subject: name,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: Certificate.Extensions(),
            issuerPrivateKey: .init(key)
        )
        let policy = ServerTrustPolicy.pinned(certificateDER: try expired.serializeAsPEM().derBytes)
        #expect(await policy.evaluate(presentedChain: [expired], serverHostname: "elsewhere").isSuccess)
    }

    @Test func pinsAreBuiltFromFilesAndFingerprints() throws {
        let temporary = try TemporaryDirectory()
        let leaf = try TestPKI.makeLeaf(commonName: "peer")
        let digest = CertificateFingerprint(derBytes: try leaf.derBytes, algorithm: .sha256)
        let expected = ServerTrustPolicy.pinned(sha256: digest.bytes)

        #expect(try ServerTrustPolicy.pinned(fingerprint: digest.colonHex) == expected)
        #expect(try ServerTrustPolicy.pinned(fingerprint: digest.hex) == expected)
        let pemPath = try temporary.write(try leaf.certificatePEM, to: "peer.pem")
        #expect(try ServerTrustPolicy.pinned(certificateFile: pemPath) == expected)
        let derPath = try temporary.write(try leaf.derBytes, to: "peer.der")
        #expect(try ServerTrustPolicy.pinned(certificateFile: derPath) == expected)

        let twoPath = try temporary.write(try leaf.certificatePEM + leaf.certificatePEM, to: "two.pem")
        #expect(
            throws: TrustError.certificateFileUnusable(
                path: twoPath,
                reason: "it holds 2 certificates; a pin needs exactly one"
            )
        ) {
            try ServerTrustPolicy.pinned(certificateFile: twoPath)
        }
        let junkPath = try temporary.write("junk", to: "junk.der")
        #expect(throws: TrustError.self) { try ServerTrustPolicy.pinned(certificateFile: junkPath) }
    }

    @Test func selfSignedOnlyAcceptsSelfSignedAndRefusesCASigned() async throws {
        let ca = try TestPKI.makeCA(commonName: "Test CA")
        let selfSigned = try TestPKI.makeLeaf(commonName: "peer")
        let caSigned = try TestPKI.makeLeaf(commonName: "server", issuer: ca)

        let policy = ServerTrustPolicy.selfSignedOnly
        #expect(
            await policy.evaluate(presentedChain: [selfSigned.certificate], serverHostname: nil).isSuccess
        )
        let refused = await policy.evaluate(
            presentedChain: [caSigned.certificate, ca.certificate],
            serverHostname: nil
        )
        #expect(refused.failure == .notSelfSigned(subject: "CN=server", issuer: "CN=Test CA"))
    }

    @Test func selfSignedOnlyRefusesAForgedSelfSignature() async throws {
        // Subject == issuer, but signed by a different key: it only pretends to be self-signed.
        let key = P256.Signing.PrivateKey()
        let name = try DistinguishedName { CommonName("forged") }
        let forged = try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: .init(key.publicKey),
            notValidBefore: Date() - 3600,
            notValidAfter: Date() + 3600,
            issuer: name,
            subject: name,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: Certificate.Extensions(),
            issuerPrivateKey: .init(P256.Signing.PrivateKey())
        )
        let result = await ServerTrustPolicy.selfSignedOnly.evaluate(
            presentedChain: [forged],
            serverHostname: nil
        )
        #expect(result.failure == .selfSignatureInvalid(subject: "CN=forged"))
    }

    @Test func caPolicyChecksChainAndHostname() async throws {
        let ca = try TestPKI.makeCA(commonName: "Test CA")
        let otherCA = try TestPKI.makeCA(commonName: "Other CA")
        let server = try TestPKI.makeLeaf(commonName: "sg", dnsNames: ["sg.example"], issuer: ca)
        let stranger = try TestPKI.makeLeaf(commonName: "sg", dnsNames: ["sg.example"], issuer: otherCA)
        let policy = ServerTrustPolicy.ca(roots: [ca.certificate], checkHostname: true)

        #expect(
            await policy.evaluate(presentedChain: [server.certificate], serverHostname: "sg.example")
                .isSuccess
        )
        let wrongHost = await policy.evaluate(
            presentedChain: [server.certificate],
            serverHostname: "other.example"
        )
        #expect(
            wrongHost.failure
                == .hostnameMismatch(expected: "other.example", certificateNames: ["sg.example"])
        )
        let noHost = await policy.evaluate(presentedChain: [server.certificate], serverHostname: nil)
        #expect(noHost.failure == .serverHostnameRequired)

        let unknown = await policy.evaluate(
            presentedChain: [stranger.certificate],
            serverHostname: "sg.example"
        )
        guard case .untrustedChain(let subject, let issuer, _) = unknown.failure else {
            Issue.record("unexpected result \(unknown)")
            return
        }
        #expect(subject == "CN=sg" && issuer == "CN=Other CA")

        let lenient = ServerTrustPolicy.ca(roots: [ca.certificate], checkHostname: false)
        #expect(
            await lenient.evaluate(presentedChain: [server.certificate], serverHostname: "other.example")
                .isSuccess
        )
    }

    @Test func caPolicyRefusesAnExpiredCertificate() async throws {
        let ca = try TestPKI.makeCA(commonName: "Test CA")
        let key = P256.Signing.PrivateKey()
        let expired = try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: .init(key.publicKey),
            notValidBefore: Date() - 10 * 86400,
            notValidAfter: Date() - 86400,
            issuer: ca.certificate.subject,
            subject: try DistinguishedName { CommonName("sg") },
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                SubjectAlternativeNames([.dnsName("sg.example")])
            },
            issuerPrivateKey: .init(ca.privateKey)
        )
        let policy = ServerTrustPolicy.ca(roots: [ca.certificate], checkHostname: true)
        let result = await policy.evaluate(presentedChain: [expired], serverHostname: "sg.example")
        guard case .untrustedChain(_, _, let reasons) = result.failure else {
            Issue.record("unexpected result \(result)")
            return
        }
        #expect(!reasons.isEmpty)
    }

    @Test func emptyChainIsRefused() async {
        let result = await ServerTrustPolicy.selfSignedOnly.evaluate(
            presentedChain: [],
            serverHostname: nil
        )
        #expect(result.failure == .noCertificatePresented)
    }
}

extension Result {
    var isSuccess: Bool {
        if case .success = self { return true }
        return false
    }

    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
