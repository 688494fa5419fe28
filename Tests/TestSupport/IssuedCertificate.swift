import Crypto
import Foundation
import NIOSSL
import X509

/// A certificate and its key, issued by `issuer` (or self-issued as a CA when `issuer` is nil).
package struct IssuedCertificate {
    package let certificate: Certificate
    package let key: P256.Signing.PrivateKey

    package init(commonName: String, issuer: IssuedCertificate?, dnsNames: [String] = []) throws {
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
    package func writePEMFiles(in directory: URL, named name: String) throws -> (certificate: String, key: String) {
        let certificatePath = directory.appendingPathComponent("\(name).pem").path
        let keyPath = directory.appendingPathComponent("\(name)-key.pem").path
        try certificate.serializeAsPEM().pemString.write(toFile: certificatePath, atomically: true, encoding: .utf8)
        try key.pemRepresentation.write(toFile: keyPath, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: keyPath)
        return (certificatePath, keyPath)
    }

    package func clientTLS() throws -> TLSConfiguration {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.certificateVerification = .none
        tls.certificateChain = [
            .certificate(try NIOSSLCertificate(bytes: try certificate.serializeAsPEM().derBytes, format: .der))
        ]
        tls.privateKey = .privateKey(try NIOSSLPrivateKey(bytes: Array(key.pemRepresentation.utf8), format: .pem))
        return tls
    }
}
