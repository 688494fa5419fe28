import Crypto
import NIOSSL
import X509

/// How the gateway decides to trust the server it connects to as an active peer.
///
/// The cases mirror Couchbase Lite's replicator options: the platform's trust store, explicit CA roots
/// (`pinnedServerCertificate` as a CA), `acceptOnlySelfSignedServerCertificate`, and a pinned certificate.
public enum ServerTrustPolicy: Hashable, Sendable {
    /// Trust chains ending at the system's trusted roots, as for a Sync Gateway behind a public CA.
    case systemRoots(checkHostname: Bool)
    /// Trust chains ending at one of `roots`, as for a Sync Gateway with a private CA.
    case ca(roots: [Certificate], checkHostname: Bool)
    /// Accept any self-signed certificate and refuse CA-signed ones, as Couchbase Lite's
    /// `acceptOnlySelfSignedServerCertificate` does for peer-to-peer listeners. This authenticates nothing by
    /// itself; it only encrypts. Hostnames are not checked because listeners' self-signed certificates do not
    /// name their (changing) addresses.
    case selfSignedOnly
    /// Accept exactly the certificate whose DER encoding has this SHA-256 digest, whatever its issuer, names or
    /// validity: the pin is the whole trust decision.
    case pinned(sha256: [UInt8])
}

extension ServerTrustPolicy {
    /// Pins a certificate given by its SHA-256 fingerprint in hex, with or without colons.
    package static func pinned(fingerprint: String) throws(TrustError) -> ServerTrustPolicy {
        .pinned(sha256: try CertificateFingerprint(hexString: fingerprint, algorithm: .sha256).bytes)
    }

    /// Pins the certificate encoded in `derBytes`.
    package static func pinned(certificateDER derBytes: [UInt8]) -> ServerTrustPolicy {
        .pinned(sha256: CertificateFingerprint(derBytes: derBytes, algorithm: .sha256).bytes)
    }

    /// Pins the certificate stored in `path`, PEM or DER encoded. A PEM file must hold exactly one certificate,
    /// so that it is unambiguous which one is pinned.
    package static func pinned(certificateFile path: String) throws(TrustError) -> ServerTrustPolicy {
        let certificates = try Self.readCertificates(path)
        guard certificates.count == 1 else {
            throw .certificateFileUnusable(
                path: path,
                reason: "it holds \(certificates.count) certificates; a pin needs exactly one"
            )
        }
        return .pinned(certificateDER: certificates[0].derBytes)
    }

    /// Trusts the CA certificates stored in `path` (PEM, one or more; or a single DER certificate).
    package static func ca(rootsFile path: String, checkHostname: Bool) throws(TrustError)
        -> ServerTrustPolicy
    {
        .ca(roots: try Self.readCertificates(path).map { $0.certificate }, checkHostname: checkHostname)
    }

    /// Trusts the CA certificates stored in all of `paths`.
    package static func ca(rootsFiles paths: [String], checkHostname: Bool) throws(TrustError) -> ServerTrustPolicy {
        .ca(roots: try certificates(inFiles: paths), checkHostname: checkHostname)
    }

    /// The certificates of PEM or DER files, in order: CA roots for servers and for client-certificate checks.
    public static func certificates(inFiles paths: [String]) throws(TrustError) -> [Certificate] {
        var certificates: [Certificate] = []
        for path in paths {
            certificates += try readCertificates(path).map(\.certificate)
        }
        return certificates
    }

    /// Reads the certificates of a PEM or DER file, keeping each one's exact DER bytes, which pins depend on.
    private static func readCertificates(
        _ path: String
    ) throws(TrustError) -> [(certificate: Certificate, derBytes: [UInt8])] {
        let contents: [UInt8]
        do {
            contents = try IdentityFileSystem.readFile(path)
        } catch {
            throw .certificateFileUnusable(path: path, reason: error.description)
        }
        let derBlobs: [[UInt8]]
        if String(decoding: contents, as: UTF8.self).contains("-----BEGIN CERTIFICATE-----") {
            do {
                derBlobs = try NIOSSLCertificate.fromPEMBytes(contents).map { try $0.toDERBytes() }
            } catch {
                throw .certificateFileUnusable(
                    path: path,
                    reason: "not a valid PEM certificate file (\(error))"
                )
            }
        } else {
            derBlobs = [contents]
        }
        guard !derBlobs.isEmpty else {
            throw .certificateFileUnusable(path: path, reason: "it contains no certificate")
        }
        var certificates: [(certificate: Certificate, derBytes: [UInt8])] = []
        for der in derBlobs {
            do {
                certificates.append((try Certificate(derEncoded: der), der))
            } catch {
                throw .certificateFileUnusable(
                    path: path,
                    reason: "not a PEM or DER certificate (\(error))"
                )
            }
        }
        return certificates
    }
}
