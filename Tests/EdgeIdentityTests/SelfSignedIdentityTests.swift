import Crypto
import EdgeGatewayTestSupport
import EdgeIdentity
import Foundation
import Logging
import Testing
import X509

@Suite struct SelfSignedIdentityTests {
    let logger = Logger(label: "EdgeIdentityTests", factory: { _ in SwiftLogNoOpLogHandler() })

    @Test func createdOnceThenReusedWithTheSameFingerprint() throws {
        let temporary = try TemporaryDirectory()
        let directory = temporary.path("state/tls")
        let created = try TLSIdentity.loadOrCreateSelfSigned(
            directory: directory,
            commonName: "edge-01",
            logger: logger
        )
        let reloaded = try TLSIdentity.loadOrCreateSelfSigned(
            directory: directory,
            commonName: "edge-01",
            logger: logger
        )

        #expect(created.sha256Fingerprint == reloaded.sha256Fingerprint)
        #expect(created.derBytes == reloaded.derBytes)
        #expect(try temporary.permissions(of: "state/tls/\(TLSIdentity.keyFileName)") == 0o600)
        #expect(try temporary.permissions(of: "state/tls") == 0o700)
    }

    @Test func generatedCertificateHasTheDocumentedProfile() throws {
        let temporary = try TemporaryDirectory()
        let identity = try TLSIdentity.loadOrCreateSelfSigned(
            directory: temporary.path,
            commonName: "edge-01",
            logger: logger
        )
        let certificate = identity.leafCertificate

        #expect(identity.subject == "CN=edge-01")
        #expect(certificate.issuer == certificate.subject)
        #expect(certificate.publicKey.isValidSignature(certificate.signature, for: certificate))
        #expect(P256.Signing.PublicKey(certificate.publicKey) != nil)
        let validity = identity.notValidAfter.timeIntervalSince(identity.notValidBefore)
        #expect(abs(validity - (TLSIdentity.selfSignedValidity + 3600)) < 1)
        #expect(identity.notValidBefore < Date())

        let extensions = certificate.extensions
        #expect(try extensions.basicConstraints == .notCertificateAuthority)
        #expect(try extensions.keyUsage == KeyUsage(digitalSignature: true))
        let usages = try #require(try extensions.extendedKeyUsage)
        #expect(usages.contains(.serverAuth) && usages.contains(.clientAuth))
        let names = try #require(try extensions.subjectAlternativeNames)
        #expect(Array(names) == [.dnsName("localhost"), .dnsName("edge-01")])
    }

    @Test func aNodeNameThatIsNotAHostnameIsLeftOutOfTheAlternativeNames() throws {
        let temporary = try TemporaryDirectory()
        let identity = try TLSIdentity.loadOrCreateSelfSigned(
            directory: temporary.path,
            commonName: "Edge node #1",
            logger: logger
        )
        #expect(identity.subject == "CN=Edge node #1")
        let names = try #require(try identity.leafCertificate.extensions.subjectAlternativeNames)
        #expect(Array(names) == [.dnsName("localhost")])
    }

    @Test func corruptKeyIsReportedAndLeftUntouched() throws {
        let temporary = try TemporaryDirectory()
        _ = try TLSIdentity.loadOrCreateSelfSigned(
            directory: temporary.path,
            commonName: "edge-01",
            logger: logger
        )
        let garbage = Array("-----BEGIN PRIVATE KEY-----\nnot a key\n-----END PRIVATE KEY-----\n".utf8)
        try temporary.write(garbage, to: TLSIdentity.keyFileName)
        try temporary.setPermissions(0o600, of: TLSIdentity.keyFileName)
        let certificateBefore = try temporary.read(TLSIdentity.certificateFileName)

        let error = try #require(throws: IdentityError.self) {
            try TLSIdentity.loadOrCreateSelfSigned(
                directory: temporary.path,
                commonName: "edge-01",
                logger: logger
            )
        }
        guard case .privateKeyCorrupt(let path, _) = error else {
            Issue.record("unexpected error \(error)")
            return
        }
        #expect(path == temporary.path(TLSIdentity.keyFileName))
        #expect(error.description.contains(path))
        #expect(try temporary.read(TLSIdentity.keyFileName) == garbage)
        #expect(try temporary.read(TLSIdentity.certificateFileName) == certificateBefore)
    }

    @Test func corruptCertificateIsReportedAndLeftUntouched() throws {
        let temporary = try TemporaryDirectory()
        _ = try TLSIdentity.loadOrCreateSelfSigned(
            directory: temporary.path,
            commonName: "edge-01",
            logger: logger
        )
        let garbage = Array("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n".utf8)
        try temporary.write(garbage, to: TLSIdentity.certificateFileName)

        let error = try #require(throws: IdentityError.self) {
            try TLSIdentity.loadOrCreateSelfSigned(
                directory: temporary.path,
                commonName: "edge-01",
                logger: logger
            )
        }
        guard case .certificateCorrupt(let path, _) = error else {
            Issue.record("unexpected error \(error)")
            return
        }
        #expect(path == temporary.path(TLSIdentity.certificateFileName))
        #expect(try temporary.read(TLSIdentity.certificateFileName) == garbage)
    }

    @Test func keyReadableByOthersIsRefusedWithAFix() throws {
        let temporary = try TemporaryDirectory()
        _ = try TLSIdentity.loadOrCreateSelfSigned(
            directory: temporary.path,
            commonName: "edge-01",
            logger: logger
        )
        try temporary.setPermissions(0o644, of: TLSIdentity.keyFileName)

        let keyPath = temporary.path(TLSIdentity.keyFileName)
        #expect(throws: IdentityError.keyPermissionsTooOpen(path: keyPath, mode: 0o644)) {
            try TLSIdentity.loadOrCreateSelfSigned(
                directory: temporary.path,
                commonName: "edge-01",
                logger: logger
            )
        }
        #expect(
            IdentityError.keyPermissionsTooOpen(path: keyPath, mode: 0o644).description.contains(
                "chmod 600"
            )
        )
        #expect(try temporary.permissions(of: TLSIdentity.keyFileName) == 0o644)
    }

    @Test func halfAnIdentityIsReportedInsteadOfReplaced() throws {
        let temporary = try TemporaryDirectory()
        _ = try TLSIdentity.loadOrCreateSelfSigned(
            directory: temporary.path,
            commonName: "edge-01",
            logger: logger
        )
        try FileManager.default.removeItem(atPath: temporary.path(TLSIdentity.certificateFileName))

        #expect(
            throws: IdentityError.incompleteIdentity(
                presentPath: temporary.path(TLSIdentity.keyFileName),
                missingPath: temporary.path(TLSIdentity.certificateFileName)
            )
        ) {
            try TLSIdentity.loadOrCreateSelfSigned(
                directory: temporary.path,
                commonName: "edge-01",
                logger: logger
            )
        }
        #expect(
            !FileManager.default.fileExists(atPath: temporary.path(TLSIdentity.certificateFileName))
        )
    }

    @Test func keyOfAnotherCertificateIsRefused() throws {
        let temporary = try TemporaryDirectory()
        _ = try TLSIdentity.loadOrCreateSelfSigned(
            directory: temporary.path,
            commonName: "edge-01",
            logger: logger
        )
        try temporary.write(P256.Signing.PrivateKey().pemRepresentation, to: TLSIdentity.keyFileName)

        #expect(
            throws: IdentityError.keyDoesNotMatchCertificate(
                certificatePath: temporary.path(TLSIdentity.certificateFileName),
                keyPath: temporary.path(TLSIdentity.keyFileName)
            )
        ) {
            try TLSIdentity.loadOrCreateSelfSigned(
                directory: temporary.path,
                commonName: "edge-01",
                logger: logger
            )
        }
    }

    @Test func rotationChangesTheFingerprintAndKeepsThePreviousFiles() throws {
        let temporary = try TemporaryDirectory()
        let original = try TLSIdentity.loadOrCreateSelfSigned(
            directory: temporary.path,
            commonName: "edge-01",
            logger: logger
        )
        let originalKey = try temporary.read(TLSIdentity.keyFileName)
        let originalCertificate = try temporary.read(TLSIdentity.certificateFileName)

        let rotated = try TLSIdentity.rotateSelfSigned(
            directory: temporary.path,
            commonName: "edge-01",
            logger: logger
        )
        let reloaded = try TLSIdentity.loadOrCreateSelfSigned(
            directory: temporary.path,
            commonName: "edge-01",
            logger: logger
        )

        #expect(rotated.sha256Fingerprint != original.sha256Fingerprint)
        #expect(reloaded.sha256Fingerprint == rotated.sha256Fingerprint)
        let suffix = TLSIdentity.previousFileSuffix
        #expect(try temporary.read(TLSIdentity.keyFileName + suffix) == originalKey)
        #expect(try temporary.read(TLSIdentity.certificateFileName + suffix) == originalCertificate)
        #expect(try temporary.permissions(of: TLSIdentity.keyFileName + suffix) == 0o600)
        #expect(try temporary.permissions(of: TLSIdentity.keyFileName) == 0o600)
        let previous = try TLSIdentity.load(
            certificatePEMFile: temporary.path(TLSIdentity.certificateFileName + suffix),
            keyPEMFile: temporary.path(TLSIdentity.keyFileName + suffix)
        )
        #expect(previous.sha256Fingerprint == original.sha256Fingerprint)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: temporary.path).filter {
            $0.contains(".tmp-")
        }
        #expect(leftovers.isEmpty)
    }

    @Test func emptyNodeNameIsRejected() throws {
        let temporary = try TemporaryDirectory()
        let error = try #require(throws: IdentityError.self) {
            try TLSIdentity.loadOrCreateSelfSigned(
                directory: temporary.path,
                commonName: "",
                logger: logger
            )
        }
        guard case .certificateGenerationFailed = error else {
            Issue.record("unexpected error \(error)")
            return
        }
    }
}
