import Crypto
import EdgeGatewayTestSupport
import EdgeIdentity
import Foundation
import X509

/// A certificate made for a test, with its key.
struct TestCertificate {
    let certificate: Certificate
    let privateKey: P256.Signing.PrivateKey

    var derBytes: [UInt8] {
        get throws { try self.certificate.serializeAsPEM().derBytes }
    }

    var certificatePEM: String {
        get throws { try self.certificate.serializeAsPEM().pemString + "\n" }
    }

    /// Writes the certificate and key as PEM files in `directory` and loads them as an identity.
    func identity(in directory: TemporaryDirectory, name: String) throws -> TLSIdentity {
        let certificatePath = try directory.write(self.certificatePEM, to: "\(name)-cert.pem")
        let keyPath = try directory.write(self.privateKey.pemRepresentation, to: "\(name)-key.pem")
        return try TLSIdentity.load(certificatePEMFile: certificatePath, keyPEMFile: keyPath)
    }
}

/// Builds small PKIs: CAs, and leaves either self-signed or issued by a CA.
enum TestPKI {
    static func makeCA(commonName: String) throws -> TestCertificate {
        let key = P256.Signing.PrivateKey()
        let name = try DistinguishedName { CommonName(commonName) }
        let certificate = try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: .init(key.publicKey),
            notValidBefore: Date() - 3600,
            notValidAfter: Date() + 86400,
            issuer: name,
            subject: name,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                Critical(KeyUsage(keyCertSign: true))
                SubjectKeyIdentifier(hash: .init(key.publicKey))
            },
            issuerPrivateKey: .init(key)
        )
        return TestCertificate(certificate: certificate, privateKey: key)
    }

    /// A leaf certificate for `dnsNames`, issued by `issuer`, or self-signed when `issuer` is nil.
    static func makeLeaf(
        commonName: String,
        dnsNames: [String] = ["localhost"],
        issuer: TestCertificate? = nil
    ) throws -> TestCertificate {
        let key = P256.Signing.PrivateKey()
        let subject = try DistinguishedName { CommonName(commonName) }
        let certificate = try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: .init(key.publicKey),
            notValidBefore: Date() - 3600,
            notValidAfter: Date() + 86400,
            issuer: issuer?.certificate.subject ?? subject,
            subject: subject,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                try ExtendedKeyUsage([.serverAuth, .clientAuth])
                SubjectAlternativeNames(dnsNames.map { .dnsName($0) })
            },
            issuerPrivateKey: .init(issuer?.privateKey ?? key)
        )
        return TestCertificate(certificate: certificate, privateKey: key)
    }
}
