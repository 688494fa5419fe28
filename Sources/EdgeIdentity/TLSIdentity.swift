import Foundation
import NIOSSL
import X509

/// A certificate chain and the private key of its leaf: what this node presents to its TLS peers.
///
/// The gateway uses one identity for both roles: as the server for Couchbase Lite clients and as the client
/// when it replicates upstream (when the upstream asks for a client certificate).
public struct TLSIdentity: Sendable {
    /// The chain to present, leaf first.
    package let certificateChain: [NIOSSLCertificate]
    /// The leaf's private key.
    package let privateKey: NIOSSLPrivateKey
    /// The leaf, parsed, for display and inspection.
    package let leafCertificate: Certificate
    /// The leaf's DER encoding: what fingerprints and pins are computed over.
    public let derBytes: [UInt8]

    /// Builds an identity from parts already loaded, checking that the key belongs to the leaf.
    ///
    /// - Parameters:
    ///   - certificateSource: where the chain came from, named in errors.
    ///   - keySource: where the key came from, named in errors.
    init(
        certificateChain: [NIOSSLCertificate],
        privateKey: NIOSSLPrivateKey,
        certificateSource: String,
        keySource: String
    ) throws(IdentityError) {
        guard let leaf = certificateChain.first else {
            throw .certificateChainEmpty(path: certificateSource)
        }
        let derBytes: [UInt8]
        let parsedLeaf: Certificate
        do {
            derBytes = try leaf.toDERBytes()
            parsedLeaf = try Certificate(derEncoded: derBytes)
        } catch {
            throw .certificateCorrupt(
                path: certificateSource,
                reason: "cannot parse the leaf certificate: \(error)"
            )
        }
        try Self.checkKey(
            privateKey,
            matches: leaf,
            certificateSource: certificateSource,
            keySource: keySource
        )
        self.certificateChain = certificateChain
        self.privateKey = privateKey
        self.leafCertificate = parsedLeaf
        self.derBytes = derBytes
    }

    /// BoringSSL refuses a key that does not match the certificate when both are installed in a context;
    /// doing that here reports the mismatch at load time, naming the files, instead of as an obscure failure
    /// when the listener starts.
    private static func checkKey(
        _ privateKey: NIOSSLPrivateKey,
        matches leaf: NIOSSLCertificate,
        certificateSource: String,
        keySource: String
    ) throws(IdentityError) {
        let configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: [.certificate(leaf)],
            privateKey: .privateKey(privateKey)
        )
        do {
            _ = try NIOSSLContext(configuration: configuration)
        } catch {
            throw .keyDoesNotMatchCertificate(certificatePath: certificateSource, keyPath: keySource)
        }
    }

    /// The SHA-256 fingerprint of the leaf certificate; what peers pin.
    package var sha256Fingerprint: CertificateFingerprint {
        CertificateFingerprint(derBytes: self.derBytes, algorithm: .sha256)
    }

    /// The SHA-1 fingerprint of the leaf certificate, for tools that still display it.
    package var sha1Fingerprint: CertificateFingerprint {
        CertificateFingerprint(derBytes: self.derBytes, algorithm: .sha1)
    }

    /// The leaf certificate in PEM form, e.g. to hand to clients that pin the certificate itself.
    public var pemString: String {
        Self.pemString(derBytes: self.derBytes)
    }

    /// The leaf's subject as an RFC 4514 string, e.g. `CN=edge-01`.
    package var subject: String {
        self.leafCertificate.subject.description
    }

    package var notValidBefore: Date {
        self.leafCertificate.notValidBefore
    }

    package var notValidAfter: Date {
        self.leafCertificate.notValidAfter
    }

    /// A certificate's DER encoding as one PEM block.
    public static func pemString(derBytes: [UInt8]) -> String {
        let body = Data(derBytes).base64EncodedString(options: [
            .lineLength64Characters, .endLineWithLineFeed,
        ])
        return "-----BEGIN CERTIFICATE-----\n\(body)\n-----END CERTIFICATE-----\n"
    }
}
