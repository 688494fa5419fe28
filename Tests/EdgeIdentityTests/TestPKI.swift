import Crypto
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

/// A directory removed when the test that made it ends.
final class TemporaryDirectory {
    let path: String

    init() throws {
        self.path =
            FileManager.default.temporaryDirectory
            .appendingPathComponent("edge-identity-tests-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: self.path, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(atPath: self.path)
    }

    func path(_ name: String) -> String {
        "\(self.path)/\(name)"
    }

    @discardableResult
    func write(_ contents: String, to name: String) throws -> String {
        try self.write(Array(contents.utf8), to: name)
    }

    @discardableResult
    func write(_ contents: [UInt8], to name: String) throws -> String {
        let path = self.path(name)
        try Data(contents).write(to: URL(fileURLWithPath: path))
        return path
    }

    func read(_ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: URL(fileURLWithPath: self.path(name))))
    }

    func permissions(of name: String) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: self.path(name))
        return (attributes[.posixPermissions] as? NSNumber)?.intValue ?? -1
    }

    func setPermissions(_ mode: Int, of name: String) throws {
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: self.path(name))
    }
}
