import EdgeGatewayTestSupport
import Foundation
import GatewayConfigurationFile
import Testing

@Suite("edge-gateway pair and cert")
struct PairingCommandTests {
    /// A configuration with one self-signed listener on loopback and one without TLS.
    static func configuration(in directory: URL) throws -> String {
        let file = directory.appendingPathComponent("gateway.toml")
        try GatewayTOML(
            name: "pair-test", dataDirectory: directory.appendingPathComponent("data").path, opsPort: nil,
            listeners: [
                GatewayTOML.listener(port: 4984, tls: "self-signed"), GatewayTOML.listener(name: "plain", port: 4990),
            ]
        ).write(to: file.path)
        return file.path
    }

    /// The `s256` parameter of a payload, as base64url.
    static func sha256Parameter(_ payload: String) -> String? {
        payload.split(separator: "&").first { $0.hasPrefix("s256=") }.map { String($0.dropFirst(5)) }
    }

    /// Colon hex to base64url, to compare `cert show` with a payload.
    static func base64URL(colonHex: String) -> String {
        let bytes = colonHex.split(separator: ":").compactMap { UInt8($0, radix: 16) }
        return Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static func showSHA256(config: String) async throws -> String {
        let show = try await EdgeGatewayExecutable.run(["cert", "show", "--config", config])
        #expect(show.status == 0, "\(show.standardError)")
        let line = try #require(
            show.standardOutput.split(separator: "\n").first { $0.hasPrefix("SHA-256:") })
        return String(line.dropFirst("SHA-256:".count).trimmingCharacters(in: .whitespaces))
    }

    @Test("pair --format text pins the certificate cert show reports; cert rotate changes it")
    func payloadMatchesCertificateAndRotates() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let config = try Self.configuration(in: directory)

        let pair = try await EdgeGatewayExecutable.run(["pair", "--config", config, "--format", "text"])
        #expect(pair.status == 0, "\(pair.standardError)")
        let payload = pair.standardOutput.trimmingCharacters(in: .newlines)
        #expect(payload.hasPrefix("edgegw://pair?v=1&a=127.0.0.1&p=4984&db=inventory&s256="))
        let nodeID = try String(contentsOf: directory.appendingPathComponent("data/node-id"), encoding: .utf8)
        #expect(payload.hasSuffix("&n=pair-test&id=\(nodeID.trimmingCharacters(in: .newlines))"))
        let shownSHA256 = try await Self.showSHA256(config: config)
        #expect(Self.sha256Parameter(payload) == Self.base64URL(colonHex: shownSHA256))

        let rotate = try await EdgeGatewayExecutable.run(["cert", "rotate", "--config", config])
        #expect(rotate.status == 0, "\(rotate.standardError)")
        #expect(rotate.standardError.contains("must pair again"))
        let rotatedPayload = try #require(
            rotate.standardOutput.split(separator: "\n").first.map(String.init))
        #expect(Self.sha256Parameter(rotatedPayload) != Self.sha256Parameter(payload))

        let again = try await EdgeGatewayExecutable.run(["pair", "--config", config, "--format", "text"])
        #expect(again.standardOutput.trimmingCharacters(in: .newlines) == rotatedPayload)
        #expect(try await Self.showSHA256(config: config) != shownSHA256)
    }

    @Test("a listener without TLS has nothing to pair with: exit 1 and say so")
    func tlsOff() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let config = try Self.configuration(in: directory)
        let pair = try await EdgeGatewayExecutable.run(["pair", "--config", config, "--listener", "plain"])
        #expect(pair.status == 1)
        #expect(pair.standardOutput.isEmpty)
        #expect(pair.standardError.contains("no certificate digest to pair with"))
    }

    @Test("the terminal format ends with the payload and the colon-hex fingerprint")
    func terminalFormat() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let config = try Self.configuration(in: directory)
        let pair = try await EdgeGatewayExecutable.run([
            "pair", "--config", config, "--address", "192.168.1.10",
        ])
        #expect(pair.status == 0, "\(pair.standardError)")
        let lines = pair.standardOutput.split(separator: "\n")
        #expect(lines.first?.allSatisfy { $0 == "█" } == true)
        #expect(lines.dropLast().last?.hasPrefix("edgegw://pair?v=1&a=192.168.1.10&") == true)
        #expect(lines.last == "SHA-256 \(try await Self.showSHA256(config: config))"[...])
    }

    @Test("cert export writes the public certificate only")
    func export() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let config = try Self.configuration(in: directory)
        let pem = try await EdgeGatewayExecutable.run(["cert", "export", "--pem", "--config", config])
        #expect(pem.status == 0, "\(pem.standardError)")
        #expect(pem.standardOutput.hasPrefix("-----BEGIN CERTIFICATE-----"))
        #expect(!pem.standardOutput.contains("PRIVATE KEY"))
        let both = try await EdgeGatewayExecutable.run([
            "cert", "export", "--pem", "--der", "--config", config,
        ])
        #expect(both.status != 0)
        #expect(both.standardError.contains("exactly one of --der and --pem"))
    }

    @Test("cert import installs a PEM pair and pair then pins it")
    func importPEM() async throws {
        let source = try temporaryDirectory()
        let target = try temporaryDirectory()
        defer {
            try? FileManager.default.removeItem(at: source)
            try? FileManager.default.removeItem(at: target)
        }
        let sourceConfig = try Self.configuration(in: source)
        let exportedSHA256 = try await Self.showSHA256(config: sourceConfig)
        let identity = source.appendingPathComponent("data/identity")
        let config = try Self.configuration(in: target)
        let imported = try await EdgeGatewayExecutable.run([
            "cert", "import", "--config", config,
            "--certificate", identity.appendingPathComponent("identity-cert.pem").path,
            "--key", identity.appendingPathComponent("identity-key.pem").path,
        ])
        #expect(imported.status == 0, "\(imported.standardError)")
        #expect(try await Self.showSHA256(config: config) == exportedSHA256)
        let keyPath = target.appendingPathComponent("data/identity/identity-key.pem").path
        let mode = try FileManager.default.attributesOfItem(atPath: keyPath)[.posixPermissions] as? Int
        #expect(mode == 0o600)

        let mismatched = try await EdgeGatewayExecutable.run([
            "cert", "import", "--config", config,
            "--certificate", identity.appendingPathComponent("identity-cert.pem").path,
            "--key", identity.appendingPathComponent("identity-cert.pem").path,
        ])
        #expect(mismatched.status == 1)
        #expect(mismatched.standardError.contains("identity-cert.pem"))
    }

    @Test(
        "pair --format png --output writes a code zxing decodes to the payload",
        .enabled(if: ZXingReader.isAvailable, Comment(rawValue: ZXingReader.unavailableReason))
    )
    func pngOutput() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let config = try Self.configuration(in: directory)
        let image = directory.appendingPathComponent("pair.png").path
        let png = try await EdgeGatewayExecutable.run([
            "pair", "--config", config, "--format", "png", "--output", image,
        ])
        #expect(png.status == 0, "\(png.standardError)")
        let text = try await EdgeGatewayExecutable.run(["pair", "--config", config, "--format", "text"])
        #expect(
            try await ZXingReader.decode(imageAt: image)
                == text.standardOutput.trimmingCharacters(in: .newlines))
    }

    @Test(
        "the exported certificate's SHA-256, computed by openssl, is the one pair pins",
        .enabled(if: OpenSSLTool.isAvailable, "needs the openssl command (scripts/dev installs it)")
    )
    func fingerprintMatchesOpenSSL() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let config = try Self.configuration(in: directory)
        let certificate = directory.appendingPathComponent("exported.der").path
        let export = try await EdgeGatewayExecutable.run([
            "cert", "export", "--der", "--output", certificate, "--config", config,
        ])
        #expect(export.status == 0, "\(export.standardError)")
        let openssl = try OpenSSLTool.run([
            "x509", "-inform", "DER", "-in", certificate, "-noout", "-fingerprint", "-sha256",
        ])
        let opensslHex = try #require(openssl.split(separator: "=").last).trimmingCharacters(
            in: .whitespacesAndNewlines)
        let pair = try await EdgeGatewayExecutable.run(["pair", "--config", config, "--format", "text"])
        #expect(
            Self.sha256Parameter(pair.standardOutput.trimmingCharacters(in: .newlines))
                == Self.base64URL(colonHex: opensslHex))
    }

    @Test(
        "cert import takes a PKCS#12 bundle with its password file, and names a wrong password",
        .enabled(if: OpenSSLTool.isAvailable, "needs the openssl command (scripts/dev installs it)")
    )
    func importPKCS12() async throws {
        let source = try temporaryDirectory()
        let target = try temporaryDirectory()
        defer {
            try? FileManager.default.removeItem(at: source)
            try? FileManager.default.removeItem(at: target)
        }
        let sourceSHA256 = try await Self.showSHA256(config: try Self.configuration(in: source))
        let identity = source.appendingPathComponent("data/identity")
        let bundle = source.appendingPathComponent("identity.p12").path
        _ = try OpenSSLTool.run([
            "pkcs12", "-export", "-in", identity.appendingPathComponent("identity-cert.pem").path,
            "-inkey", identity.appendingPathComponent("identity-key.pem").path, "-out", bundle,
            "-passout", "pass:s3cret",
        ])
        let passwordFile = source.appendingPathComponent("password")
        try "s3cret\n".write(to: passwordFile, atomically: true, encoding: .utf8)
        let wrongPasswordFile = source.appendingPathComponent("wrong")
        try "guess\n".write(to: wrongPasswordFile, atomically: true, encoding: .utf8)
        let config = try Self.configuration(in: target)

        let wrong = try await EdgeGatewayExecutable.run([
            "cert", "import", "--config", config, "--pkcs12", bundle, "--password-file", wrongPasswordFile.path,
        ])
        #expect(wrong.status == 1)
        #expect(wrong.standardError.contains("wrong password"))

        let imported = try await EdgeGatewayExecutable.run([
            "cert", "import", "--config", config, "--pkcs12", bundle, "--password-file", passwordFile.path,
        ])
        #expect(imported.status == 0, "\(imported.standardError)")
        #expect(try await Self.showSHA256(config: config) == sourceSHA256)
    }

    @Test("cert rotate refuses a listener without TLS; pair names an unknown database")
    func refusals() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let config = try Self.configuration(in: directory)
        let rotate = try await EdgeGatewayExecutable.run(["cert", "rotate", "--config", config, "--listener", "plain"])
        #expect(rotate.status == 1)
        #expect(rotate.standardError.contains("does not use a self-signed certificate"))
        let pair = try await EdgeGatewayExecutable.run(["pair", "--config", config, "--db", "missing"])
        #expect(pair.status == 2)
        #expect(pair.standardError.contains("does not serve a database named 'missing'; it serves: inventory"))
    }
}

/// The openssl command, an independent implementation to check fingerprints and build PKCS#12 bundles with.
enum OpenSSLTool {
    struct Failed: Error, CustomStringConvertible {
        let description: String
    }

    static let isAvailable: Bool = (try? run(["version"])) != nil

    static func run(_ arguments: [String]) throws -> String {
        let outcome = try runExternalToolBlocking("openssl", arguments)
        guard outcome.status == 0 else {
            throw Failed(description: "openssl \(arguments.joined(separator: " ")): \(outcome.error)")
        }
        return outcome.output
    }
}
