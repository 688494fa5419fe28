import NIOSSL

extension TLSIdentity {
    /// Loads an identity from a PEM certificate file (leaf first, then any intermediates) and a PEM private key
    /// file (PKCS#8, SEC1 or PKCS#1; unencrypted).
    package static func load(certificatePEMFile: String, keyPEMFile: String) throws(IdentityError)
        -> TLSIdentity
    {
        let certificateChain = try Self.readCertificateChain(pemFile: certificatePEMFile)
        let privateKey = try Self.readPrivateKey(pemFile: keyPEMFile)
        return try TLSIdentity(
            certificateChain: certificateChain,
            privateKey: privateKey,
            certificateSource: certificatePEMFile,
            keySource: keyPEMFile
        )
    }

    /// Loads an identity from a PKCS#12 (`.p12`/`.pfx`) bundle holding the chain and the private key.
    package static func load(pkcs12File: String, password: String) throws(IdentityError) -> TLSIdentity {
        let contents = try IdentityFileSystem.readFile(pkcs12File)
        let bundle: NIOSSLPKCS12Bundle
        do {
            bundle = try NIOSSLPKCS12Bundle(buffer: contents, passphrase: Array(password.utf8))
        } catch {
            throw Self.pkcs12Error(error, path: pkcs12File)
        }
        return try TLSIdentity(
            certificateChain: bundle.certificateChain,
            privateKey: bundle.privateKey,
            certificateSource: pkcs12File,
            keySource: pkcs12File
        )
    }

    static func readCertificateChain(pemFile path: String) throws(IdentityError)
        -> [NIOSSLCertificate]
    {
        let contents = try IdentityFileSystem.readFile(path)
        // BoringSSL fails the same way whether there is no certificate or a broken one; tell the two apart.
        guard String(decoding: contents, as: UTF8.self).contains("-----BEGIN CERTIFICATE-----") else {
            throw .certificateChainEmpty(path: path)
        }
        do {
            return try NIOSSLCertificate.fromPEMBytes(contents)
        } catch {
            throw .certificateCorrupt(path: path, reason: "a PEM certificate block is malformed (\(error))")
        }
    }

    static func readPrivateKey(pemFile path: String) throws(IdentityError) -> NIOSSLPrivateKey {
        let contents = try IdentityFileSystem.readFile(path)
        do {
            return try NIOSSLPrivateKey(bytes: contents, format: .pem)
        } catch {
            throw .privateKeyCorrupt(
                path: path,
                reason: "not an unencrypted PEM private key (PKCS#8, SEC1 or PKCS#1)"
            )
        }
    }

    /// BoringSSL reports a wrong password as `INCORRECT_PASSWORD` in its error stack; any other failure means the
    /// file itself is not a PKCS#12 bundle it can use (e.g. `BAD_PKCS12_DATA`).
    private static func pkcs12Error(_ error: any Error, path: String) -> IdentityError {
        let details = String(describing: error)
        if details.contains("INCORRECT_PASSWORD") {
            return .pkcs12WrongPassword(path: path)
        }
        return .pkcs12Corrupt(path: path, reason: "not a valid PKCS#12 bundle (\(Self.boringSSLReason(details)))")
    }

    /// The reason code of a BoringSSL error stack such as `error:13000064:PKCS8 routines:OPENSSL_internal:
    /// BAD_PKCS12_DATA at …`, or the whole text when it has no such code.
    private static func boringSSLReason(_ details: String) -> String {
        guard let marker = details.range(of: "OPENSSL_internal:") else {
            return details
        }
        return String(details[marker.upperBound...].prefix { $0 != " " && $0 != "]" })
    }
}
