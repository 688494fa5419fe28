import Crypto
import Foundation
import Logging
import X509

extension TLSIdentity {
    /// File names of the persisted self-signed identity inside its directory.
    package static let certificateFileName = "identity-cert.pem"
    package static let keyFileName = "identity-key.pem"
    /// Suffix of the files a rotation keeps from the identity it replaced.
    package static let previousFileSuffix = ".previous"

    /// How long a generated certificate is valid: 825 days.
    ///
    /// Trust in a self-signed certificate comes from the peer pinning it (or accepting any self-signed one),
    /// not from its expiry, and every renewal changes the fingerprint every pinned client must be given again,
    /// so the validity is as long as is safe. 825 days is the longest Apple platforms accept for a TLS server
    /// certificate, and Couchbase Lite clients on iOS/macOS may evaluate it with the platform's rules.
    /// Renewal is an explicit operator action (`rotateSelfSigned`), never automatic.
    package static let selfSignedValidity: TimeInterval = 825 * 24 * 60 * 60

    /// A margin for peers whose clocks are behind ours, so a fresh certificate is not "not yet valid" to them.
    static let clockSkewAllowance: TimeInterval = 60 * 60

    /// Warn this long before the certificate expires, so the operator can rotate and re-pin in time.
    static let expiryWarningPeriod: TimeInterval = 30 * 24 * 60 * 60

    /// Returns the self-signed identity persisted in `directory`, generating and persisting one on first use.
    ///
    /// Every later call returns the same certificate, hence the same fingerprint, which is what clients pin.
    /// Existing files are never replaced: an unreadable, corrupt, incomplete or too widely readable identity is
    /// an error naming the file, because silently generating a new one would break every pinned client and
    /// could hide tampering.
    ///
    /// - Parameters:
    ///   - directory: where the PEM files live; created with mode 0700 if missing.
    ///   - commonName: the node name, used as subject CN and as a DNS subject alternative name.
    package static func loadOrCreateSelfSigned(
        directory: String,
        commonName: String,
        logger: Logger
    ) throws(IdentityError) -> TLSIdentity {
        let certificatePath = Self.path(directory, Self.certificateFileName)
        let keyPath = Self.path(directory, Self.keyFileName)
        switch (IdentityFileSystem.fileExists(certificatePath), IdentityFileSystem.fileExists(keyPath))
        {
        case (true, true):
            let identity = try Self.loadPersisted(certificatePath: certificatePath, keyPath: keyPath)
            identity.logLoaded(logger: logger, source: directory)
            return identity
        case (true, false):
            throw .incompleteIdentity(presentPath: certificatePath, missingPath: keyPath)
        case (false, true):
            throw .incompleteIdentity(presentPath: keyPath, missingPath: certificatePath)
        case (false, false):
            try IdentityFileSystem.createDirectory(directory)
            let generated = try Self.generateSelfSigned(commonName: commonName, now: Date())
            // The key is placed first: a crash in between leaves a key without certificate, which the next
            // start reports instead of silently pairing a new certificate with an unknown key.
            try IdentityFileSystem.writeAtomically(generated.keyPEM, to: keyPath, mode: 0o600)
            try IdentityFileSystem.writeAtomically(
                generated.certificatePEM,
                to: certificatePath,
                mode: 0o644
            )
            let identity = try Self.loadPersisted(certificatePath: certificatePath, keyPath: keyPath)
            logger.notice(
                "Generated a new self-signed TLS identity",
                metadata: identity.logMetadata(source: directory)
            )
            return identity
        }
    }

    /// Replaces the self-signed identity in `directory` with a newly generated one and returns it.
    ///
    /// The replaced files are kept as `*.previous` (overwriting older ones): the running process keeps serving
    /// the identity it loaded until it restarts, and the operator can roll back by renaming them.
    package static func rotateSelfSigned(
        directory: String,
        commonName: String,
        logger: Logger
    ) throws(IdentityError) -> TLSIdentity {
        let certificatePath = Self.path(directory, Self.certificateFileName)
        let keyPath = Self.path(directory, Self.keyFileName)
        try IdentityFileSystem.createDirectory(directory)
        let generated = try Self.generateSelfSigned(commonName: commonName, now: Date())
        // Both new files are complete on disk before anything is renamed, so the window in which the directory
        // holds no complete identity is two renames long.
        let newKeyPath = try IdentityFileSystem.writeTemporary(
            generated.keyPEM,
            besides: keyPath,
            mode: 0o600
        )
        let newCertificatePath: String
        do {
            newCertificatePath = try IdentityFileSystem.writeTemporary(
                generated.certificatePEM,
                besides: certificatePath,
                mode: 0o644
            )
        } catch {
            IdentityFileSystem.remove(newKeyPath)
            throw error
        }
        for path in [keyPath, certificatePath] where IdentityFileSystem.fileExists(path) {
            try IdentityFileSystem.moveItem(path, to: path + Self.previousFileSuffix)
        }
        try IdentityFileSystem.moveItem(newKeyPath, to: keyPath)
        try IdentityFileSystem.moveItem(newCertificatePath, to: certificatePath)
        let identity = try Self.loadPersisted(certificatePath: certificatePath, keyPath: keyPath)
        logger.notice(
            "Rotated the self-signed TLS identity; peers that pinned the previous fingerprint must re-pin",
            metadata: identity.logMetadata(source: directory)
        )
        return identity
    }

    private static func loadPersisted(certificatePath: String, keyPath: String) throws(IdentityError)
        -> TLSIdentity
    {
        try Self.loadRequiringPrivateKeyFile(certificatePEMFile: certificatePath, keyPEMFile: keyPath)
    }

    /// Generates a P-256 key and a self-signed certificate for it, both PEM-encoded.
    ///
    /// Subject alternative names are `localhost` and the node name. IP addresses are deliberately absent: an
    /// edge node's addresses change (DHCP, several interfaces, NAT) and are not known when the identity is made.
    /// Peers therefore do not authenticate a self-signed node by hostname but by pinning its fingerprint (or by
    /// accepting self-signed certificates), as Couchbase Lite does for peer-to-peer.
    static func generateSelfSigned(
        commonName: String,
        now: Date
    ) throws(IdentityError) -> (certificatePEM: [UInt8], keyPEM: [UInt8]) {
        guard !commonName.isEmpty else {
            throw .certificateGenerationFailed(reason: "the common name (node name) is empty")
        }
        let privateKey = P256.Signing.PrivateKey()
        let publicKey = Certificate.PublicKey(privateKey.publicKey)
        var alternativeNames: [GeneralName] = [.dnsName("localhost")]
        if commonName != "localhost", Self.isDNSName(commonName) {
            alternativeNames.append(.dnsName(commonName))
        }
        do {
            let name = try DistinguishedName { CommonName(commonName) }
            let extensions = try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                try ExtendedKeyUsage([.serverAuth, .clientAuth])
                SubjectAlternativeNames(alternativeNames)
                SubjectKeyIdentifier(hash: publicKey)
            }
            let certificate = try Certificate(
                version: .v3,
                serialNumber: Certificate.SerialNumber(),
                publicKey: publicKey,
                notValidBefore: now - Self.clockSkewAllowance,
                notValidAfter: now + Self.selfSignedValidity,
                issuer: name,
                subject: name,
                signatureAlgorithm: .ecdsaWithSHA256,
                extensions: extensions,
                issuerPrivateKey: Certificate.PrivateKey(privateKey)
            )
            let certificatePEM = Self.pemString(derBytes: try certificate.serializeAsPEM().derBytes)
            return (Array(certificatePEM.utf8), Array((privateKey.pemRepresentation + "\n").utf8))
        } catch {
            throw .certificateGenerationFailed(reason: String(describing: error))
        }
    }

    /// Whether `name` can be a DNS subject alternative name: dot-separated labels of letters, digits, hyphens.
    private static func isDNSName(_ name: String) -> Bool {
        let labels = name.split(separator: ".", omittingEmptySubsequences: false)
        return labels.allSatisfy { label in
            (1...63).contains(label.count)
                && label.first != "-" && label.last != "-"
                && label.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }
        }
    }

    private static func path(_ directory: String, _ fileName: String) -> String {
        directory.hasSuffix("/") ? directory + fileName : directory + "/" + fileName
    }

    private func logLoaded(logger: Logger, source: String) {
        let now = Date()
        if self.notValidAfter <= now {
            logger.warning(
                "The TLS identity has expired; peers checking validity will refuse it. Rotate it and re-pin.",
                metadata: self.logMetadata(source: source)
            )
        } else if self.notValidAfter.timeIntervalSince(now) < Self.expiryWarningPeriod {
            logger.warning(
                "The TLS identity expires soon. Rotate it and give peers the new fingerprint.",
                metadata: self.logMetadata(source: source)
            )
        } else {
            logger.info("Loaded the TLS identity", metadata: self.logMetadata(source: source))
        }
    }

    private func logMetadata(source: String) -> Logger.Metadata {
        [
            "tls.source": "\(source)",
            "tls.subject": "\(self.subject)",
            "tls.sha256": "\(self.sha256Fingerprint.colonHex)",
            "tls.not_valid_after": "\(self.notValidAfter)",
        ]
    }
}
