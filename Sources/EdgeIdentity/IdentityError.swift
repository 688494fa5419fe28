/// Why a TLS identity could not be created, loaded or saved.
///
/// Every case names the file involved and says how to fix the problem, because these errors end up in front of
/// an operator at startup, not in front of a developer.
package enum IdentityError: Error, Equatable, Sendable {
    /// The identity directory does not exist and could not be created.
    case directoryNotCreatable(path: String, reason: String)
    /// A file exists but could not be read (permissions, I/O error, not a regular file).
    case fileUnreadable(path: String, reason: String)
    /// A file could not be written.
    case fileNotWritable(path: String, reason: String)
    /// The private key file is readable by users other than its owner.
    case keyPermissionsTooOpen(path: String, mode: UInt16)
    /// The private key file does not contain a usable private key.
    case privateKeyCorrupt(path: String, reason: String)
    /// The certificate file does not contain a usable certificate.
    case certificateCorrupt(path: String, reason: String)
    /// A certificate source contained no certificate at all.
    case certificateChainEmpty(path: String)
    /// The private key does not belong to the leaf certificate.
    case keyDoesNotMatchCertificate(certificatePath: String, keyPath: String)
    /// Only one half of a persisted identity is present.
    case incompleteIdentity(presentPath: String, missingPath: String)
    /// A PKCS#12 bundle could not be decrypted with the given password.
    case pkcs12WrongPassword(path: String)
    /// A PKCS#12 bundle could not be parsed.
    case pkcs12Corrupt(path: String, reason: String)
    /// Generating a new self-signed certificate failed.
    case certificateGenerationFailed(reason: String)
}

extension IdentityError: CustomStringConvertible {
    package var description: String {
        switch self {
        case .directoryNotCreatable(let path, let reason):
            return "Cannot create the TLS identity directory '\(path)': \(reason). "
                + "Create it yourself (mode 0700) or choose another directory."
        case .fileUnreadable(let path, let reason):
            return
                "Cannot read '\(path)': \(reason). Check that it is a regular file readable by this process."
        case .fileNotWritable(let path, let reason):
            return "Cannot write '\(path)': \(reason). Check the directory's owner and permissions."
        case .keyPermissionsTooOpen(let path, let mode):
            return
                "The private key '\(path)' has permissions \(String(mode, radix: 8)), readable by other users; "
                + "refusing to use it. Run `chmod 600 '\(path)'` (the key may already be compromised: "
                + "consider rotating the identity)."
        case .privateKeyCorrupt(let path, let reason):
            return
                "The private key '\(path)' is unusable: \(reason). It was left untouched; restore it from a "
                + "backup, or move it away (with its certificate) to generate a new identity, which changes the "
                + "fingerprint peers have pinned."
        case .certificateCorrupt(let path, let reason):
            return
                "The certificate '\(path)' is unusable: \(reason). It was left untouched; restore it from a "
                + "backup, or move it away (with its key) to generate a new identity, which changes the "
                + "fingerprint peers have pinned."
        case .certificateChainEmpty(let path):
            return "'\(path)' contains no certificate. Provide a file with the leaf certificate first, "
                + "followed by any intermediates."
        case .keyDoesNotMatchCertificate(let certificatePath, let keyPath):
            return
                "The private key '\(keyPath)' does not belong to the certificate '\(certificatePath)'. "
                + "Use the key the certificate was issued for."
        case .incompleteIdentity(let presentPath, let missingPath):
            return "Found '\(presentPath)' but not '\(missingPath)'. Restore the missing file, or move "
                + "'\(presentPath)' away to generate a new identity (peers that pinned the old one must re-pin)."
        case .pkcs12WrongPassword(let path):
            return
                "Cannot decrypt the PKCS#12 bundle '\(path)': wrong password. Check the configured password."
        case .pkcs12Corrupt(let path, let reason):
            return
                "Cannot read the PKCS#12 bundle '\(path)': \(reason). Check that it is a .p12/.pfx file "
                + "containing a certificate and its private key."
        case .certificateGenerationFailed(let reason):
            return "Cannot generate a self-signed TLS certificate: \(reason)."
        }
    }
}
