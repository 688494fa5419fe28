import EdgeGatewayTestSupport
import EdgeIdentity
import Foundation
import Testing
import X509

@Suite struct IdentityLoadingTests {
    @Test func loadsAPEMChainAndKey() throws {
        let temporary = try TemporaryDirectory()
        let ca = try TestPKI.makeCA(commonName: "Test CA")
        let leaf = try TestPKI.makeLeaf(commonName: "sg.example", dnsNames: ["sg.example"], issuer: ca)
        let chainPath = try temporary.write(
            try leaf.certificatePEM + ca.certificatePEM,
            to: "chain.pem"
        )
        let keyPath = try temporary.write(leaf.privateKey.pemRepresentation, to: "key.pem")

        let identity = try TLSIdentity.load(certificatePEMFile: chainPath, keyPEMFile: keyPath)

        #expect(identity.certificateChain.count == 2)
        #expect(identity.derBytes == (try leaf.derBytes))
        #expect(identity.subject == "CN=sg.example")
        #expect(identity.leafCertificate == leaf.certificate)
        #expect(identity.notValidAfter == leaf.certificate.notValidAfter)
        #expect(try Certificate(pemEncoded: identity.pemString) == leaf.certificate)
    }

    @Test func missingFileIsNamed() throws {
        let temporary = try TemporaryDirectory()
        let missing = temporary.path("nope.pem")
        let error = try #require(throws: IdentityError.self) {
            try TLSIdentity.load(certificatePEMFile: missing, keyPEMFile: missing)
        }
        guard case .fileUnreadable(let path, _) = error else {
            Issue.record("unexpected error \(error)")
            return
        }
        #expect(path == missing)
        #expect(error.description.contains(missing))
    }

    @Test func fileWithoutCertificateIsReported() throws {
        let temporary = try TemporaryDirectory()
        let leaf = try TestPKI.makeLeaf(commonName: "node")
        let emptyPath = try temporary.write("just some text\n", to: "empty.pem")
        let keyPath = try temporary.write(leaf.privateKey.pemRepresentation, to: "key.pem")

        #expect(throws: IdentityError.certificateChainEmpty(path: emptyPath)) {
            try TLSIdentity.load(certificatePEMFile: emptyPath, keyPEMFile: keyPath)
        }
    }

    @Test func keyInTheCertificateSlotIsACorruptKeyError() throws {
        let temporary = try TemporaryDirectory()
        let leaf = try TestPKI.makeLeaf(commonName: "node")
        let certificatePath = try temporary.write(try leaf.certificatePEM, to: "cert.pem")
        let error = try #require(throws: IdentityError.self) {
            try TLSIdentity.load(certificatePEMFile: certificatePath, keyPEMFile: certificatePath)
        }
        guard case .privateKeyCorrupt(let path, _) = error else {
            Issue.record("unexpected error \(error)")
            return
        }
        #expect(path == certificatePath)
    }

    @Test(.enabled(if: OpenSSL.isAvailable, "needs the openssl command to build PKCS#12 bundles"))
    func loadsAPKCS12Bundle() throws {
        let temporary = try TemporaryDirectory()
        let leaf = try TestPKI.makeLeaf(commonName: "bundle.example", dnsNames: ["bundle.example"])
        let bundlePath = try OpenSSL.makePKCS12(for: leaf, password: "s3cret", in: temporary)

        let identity = try TLSIdentity.load(pkcs12File: bundlePath, password: "s3cret")

        #expect(identity.derBytes == (try leaf.derBytes))
        #expect(identity.subject == "CN=bundle.example")
        _ = try identity.serverTLSConfiguration()
    }

    @Test(.enabled(if: OpenSSL.isAvailable, "needs the openssl command to build PKCS#12 bundles"))
    func wrongPKCS12PasswordIsReportedAsSuch() throws {
        let temporary = try TemporaryDirectory()
        let leaf = try TestPKI.makeLeaf(commonName: "bundle.example")
        let bundlePath = try OpenSSL.makePKCS12(for: leaf, password: "s3cret", in: temporary)

        #expect(throws: IdentityError.pkcs12WrongPassword(path: bundlePath)) {
            try TLSIdentity.load(pkcs12File: bundlePath, password: "guess")
        }
        #expect(
            IdentityError.pkcs12WrongPassword(path: bundlePath).description.contains("wrong password")
        )
    }

    @Test func garbagePKCS12IsReportedAsCorrupt() throws {
        let temporary = try TemporaryDirectory()
        let path = try temporary.write(Array(repeating: 0x42, count: 64), to: "bad.p12")
        let error = try #require(throws: IdentityError.self) {
            try TLSIdentity.load(pkcs12File: path, password: "whatever")
        }
        guard case .pkcs12Corrupt(let reportedPath, _) = error else {
            Issue.record("unexpected error \(error)")
            return
        }
        #expect(reportedPath == path)
    }
}

/// Builds PKCS#12 bundles with the `openssl` command, the way operators usually make them.
enum OpenSSL {
    static let executable = [
        "/usr/bin/openssl", "/usr/local/bin/openssl", "/opt/homebrew/bin/openssl",
    ]
    .first { FileManager.default.isExecutableFile(atPath: $0) }

    static var isAvailable: Bool { Self.executable != nil }

    struct CommandFailed: Error, CustomStringConvertible {
        let status: Int32
        let output: String
        var description: String { "openssl exited with \(self.status): \(self.output)" }
    }

    static func makePKCS12(
        for leaf: TestCertificate,
        password: String,
        in directory: TemporaryDirectory
    ) throws -> String {
        let certificatePath = try directory.write(try leaf.certificatePEM, to: "p12-cert.pem")
        let keyPath = try directory.write(leaf.privateKey.pemRepresentation, to: "p12-key.pem")
        let bundlePath = directory.path("identity.p12")
        guard let executable = Self.executable else {
            throw CommandFailed(status: -1, output: "openssl is not installed")
        }
        let process = SpawnedProcess()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = [
            "pkcs12", "-export", "-in", certificatePath, "-inkey", keyPath, "-out", bundlePath,
            "-passout", "pass:\(password)",
        ]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            throw CommandFailed(status: process.terminationStatus, output: text)
        }
        return bundlePath
    }
}
