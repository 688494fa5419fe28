extension TLSIdentity {
    /// Loads an identity whose key file must be readable by its owner only (the self-signed identity, a client
    /// certificate for an upstream). A key that others can read may already have leaked: like ssh, refuse it
    /// so the operator knows, rather than quietly use or tighten it.
    package static func loadRequiringPrivateKeyFile(certificatePEMFile: String, keyPEMFile: String)
        throws(IdentityError)
        -> TLSIdentity
    {
        try Self.requireOwnerOnly(keyPEMFile)
        return try Self.load(certificatePEMFile: certificatePEMFile, keyPEMFile: keyPEMFile)
    }

    /// Loads a PKCS#12 client identity; the bundle holds the private key, so it must be private to its owner.
    package static func loadRequiringPrivateKeyFile(pkcs12File: String, password: String) throws(IdentityError)
        -> TLSIdentity
    {
        try Self.requireOwnerOnly(pkcs12File)
        return try Self.load(pkcs12File: pkcs12File, password: password)
    }

    static func requireOwnerOnly(_ keyPath: String) throws(IdentityError) {
        let mode = try IdentityFileSystem.permissions(of: keyPath)
        guard mode & 0o077 == 0 else {
            throw .keyPermissionsTooOpen(path: keyPath, mode: mode)
        }
    }
}
