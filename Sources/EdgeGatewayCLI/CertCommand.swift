import ArgumentParser
import EdgeConfig
import EdgeIdentity
import EdgePairing
import Foundation
import NIOSSL
import NetworkInterfaces

struct CertCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cert",
        abstract: "Inspect, rotate, export or import a listener's TLS certificate.",
        subcommands: [Show.self, Rotate.self, Export.self, Import.self]
    )

    struct ListenerOptions: ParsableArguments {
        @OptionGroup var configuration: ConfigurationOptions

        @Option(help: "The listener whose certificate to use. Defaults to the first listener.")
        var listener: String?

        func target() throws -> SelectedListener {
            try SelectedListener(configuration: configuration.load(), listenerName: listener, database: nil)
        }
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the certificate's subject, validity and SHA-256 and SHA-1 fingerprints."
        )

        @OptionGroup var options: ListenerOptions

        func run() throws {
            let identity = try options.target().loadIdentity()
            let dates = ISO8601DateFormatter()
            print("Subject:    \(identity.subject)")
            print("Not before: \(dates.string(from: identity.notValidBefore))")
            print("Not after:  \(dates.string(from: identity.notValidAfter))")
            print("SHA-256:    \(identity.sha256Fingerprint.colonHex)")
            print("SHA-1:      \(identity.sha1Fingerprint.colonHex)")
        }
    }

    struct Rotate: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Replace the self-signed certificate with a new one and print the new pairing payload.",
            discussion: """
                The old files are kept as *.previous. Every paired device pinned the old fingerprint and must \
                pair again; a running gateway keeps serving the old certificate until it restarts.
                """
        )

        @OptionGroup var options: ListenerOptions

        func run() throws {
            let target = try options.target()
            guard target.listener.tls == .selfSigned else {
                printError(
                    "listener '\(target.listener.name)' does not use a self-signed certificate; "
                        + (target.listener.tls == .off
                            ? "it has tls = \"off\"."
                            : "replace its configured certificate files instead.")
                )
                throw ExitCode(1)
            }
            let identity: TLSIdentity
            do {
                identity = try TLSIdentity.rotateSelfSigned(
                    directory: target.identityDirectory,
                    commonName: target.configuration.node.name,
                    logger: target.logger
                )
            } catch {
                printError("\(error)")
                throw ExitCode(1)
            }
            printError(
                "warning: the certificate changed. Every paired device must pair again with the new payload; "
                    + "restart the gateway to serve the new certificate."
            )
            let addresses = InterfaceAddress.reachableAddresses(
                forListenerInterface: target.listener.interface
            )
            .map(\.description)
            let nodeID = try target.loadNodeID()
            if let payload = try? PairingPayload(
                identity: identity,
                addresses: addresses,
                port: target.listener.port,
                database: target.database,
                nodeName: target.configuration.node.name,
                nodeID: nodeID.uuid
            ) {
                print(payload.uriString)
            } else {
                printError(
                    "no reachable address for '\(target.listener.interface)'; use `pair --address` to pair.")
            }
            print("SHA-256 \(identity.sha256Fingerprint.colonHex)")
        }
    }

    struct Export: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Write the public certificate (never the key), for clients that pin the certificate itself."
        )

        @OptionGroup var options: ListenerOptions

        @Flag(help: "Binary DER encoding.")
        var der = false

        @Flag(help: "PEM encoding.")
        var pem = false

        @Option(help: "Write to this file instead of standard output.")
        var output: String?

        func validate() throws {
            guard der != pem else { throw ValidationError("Give exactly one of --der and --pem.") }
        }

        func run() throws {
            let identity = try options.target().loadIdentity()
            let bytes = der ? identity.derBytes : Array(identity.pemString.utf8)
            guard let output else {
                FileHandle.standardOutput.write(Data(bytes))
                return
            }
            do {
                try IdentityFiles.write(bytes, to: output, mode: 0o644)
            } catch {
                printError("\(error)")
                throw ExitCode(1)
            }
        }
    }

    struct Import: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Install a certificate and key as the identity of self-signed listeners.",
            discussion: """
                The files are checked by loading them, then written to <data_dir>/identity (key mode 0600, \
                certificate 0644); the replaced ones are kept as *.previous. Paired devices must pair again.
                """
        )

        @OptionGroup var options: ConfigurationOptions

        @Option(help: "PEM certificate chain, leaf first.")
        var certificate: String?

        @Option(help: "Unencrypted PEM private key of the leaf.")
        var key: String?

        @Option(help: "PKCS#12 bundle with the chain and the key.")
        var pkcs12: String?

        @Option(name: .customLong("password-file"), help: "File holding the PKCS#12 password.")
        var passwordFile: String?

        func validate() throws {
            switch (certificate, key, pkcs12, passwordFile) {
            case (.some, .some, nil, nil), (nil, nil, .some, _):
                return
            default:
                throw ValidationError(
                    "Give --certificate and --key, or --pkcs12 (with --password-file when it has a password)."
                )
            }
        }

        func run() throws {
            let configuration = try options.load()
            let directory = (configuration.node.dataDirectory as NSString).appendingPathComponent(
                "identity")
            do {
                let files = try importedFiles()
                try IdentityFiles.install(files, into: directory)
                let installed = try TLSIdentity.load(
                    certificatePEMFile: (directory as NSString).appendingPathComponent(
                        TLSIdentity.certificateFileName),
                    keyPEMFile: (directory as NSString).appendingPathComponent(TLSIdentity.keyFileName)
                )
                print("Imported \(installed.subject) into \(directory)")
                print("SHA-256 \(installed.sha256Fingerprint.colonHex)")
                printError(
                    "warning: paired devices must pair again; restart the gateway to serve this certificate.")
            } catch {
                printError("\(error)")
                throw ExitCode(1)
            }
        }

        private func importedFiles() throws -> IdentityFiles.PEMPair {
            if let certificate, let key {
                // Loading proves the two files belong together before anything is replaced.
                _ = try TLSIdentity.load(certificatePEMFile: certificate, keyPEMFile: key)
                return IdentityFiles.PEMPair(
                    certificate: Array(try Data(contentsOf: URL(fileURLWithPath: certificate))),
                    key: Array(try Data(contentsOf: URL(fileURLWithPath: key)))
                )
            }
            guard let pkcs12 else { throw ValidationError("--pkcs12 is missing") }
            let password = try passwordFile.map(PasswordFile.read) ?? ""
            let identity = try TLSIdentity.load(pkcs12File: pkcs12, password: password)
            return try IdentityFiles.PEMPair(identity: identity)
        }
    }
}

/// Writes identity files with their final permissions from the start, replacing atomically.
enum IdentityFiles {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// A certificate chain and its key, both PEM, as the identity directory holds them.
    struct PEMPair {
        var certificate: [UInt8]
        var key: [UInt8]

        init(certificate: [UInt8], key: [UInt8]) {
            self.certificate = certificate
            self.key = key
        }

        init(identity: TLSIdentity) throws {
            certificate = try identity.certificateChain.flatMap { certificate in
                Array(IdentityFiles.pem(label: "CERTIFICATE", der: try certificate.toDERBytes()).utf8)
            }
            let keyDER = try identity.privateKey.derBytes
            key = Array(
                IdentityFiles.pem(label: try IdentityFiles.privateKeyLabel(der: keyDER), der: keyDER).utf8)
        }
    }

    /// Installs `files` as the identity in `directory` (created 0700), keeping the replaced files as *.previous.
    static func install(_ files: PEMPair, into directory: String) throws {
        try FileManager.default.createDirectory(
            atPath: directory,
            withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o700]
        )
        let certificatePath = (directory as NSString).appendingPathComponent(TLSIdentity.certificateFileName)
        let keyPath = (directory as NSString).appendingPathComponent(TLSIdentity.keyFileName)
        // Both new files are complete on disk before anything is renamed: a directory left without an identity
        // would make the next start generate a new one, silently breaking every paired device.
        let newKeyPath = try writeTemporary(files.key, besides: keyPath, mode: 0o600)
        let newCertificatePath: String
        do {
            newCertificatePath = try writeTemporary(files.certificate, besides: certificatePath, mode: 0o644)
        } catch {
            unlink(newKeyPath)
            throw error
        }
        for path in [keyPath, certificatePath] where FileManager.default.fileExists(atPath: path) {
            try move(path, to: path + TLSIdentity.previousFileSuffix)
        }
        try move(newKeyPath, to: keyPath)
        try move(newCertificatePath, to: certificatePath)
    }

    /// Writes `bytes` to `path` atomically, the file having `mode` from its creation on.
    static func write(_ bytes: [UInt8], to path: String, mode: mode_t) throws {
        let temporary = try writeTemporary(bytes, besides: path, mode: mode)
        do {
            try move(temporary, to: path)
        } catch {
            unlink(temporary)
            throw error
        }
    }

    private static func writeTemporary(_ bytes: [UInt8], besides path: String, mode: mode_t) throws -> String {
        let temporary = "\(path).tmp-\(UInt32.random(in: 0...UInt32.max))"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard descriptor >= 0 else {
            throw Failure(description: "cannot write '\(path)': \(String(cString: strerror(errno)))")
        }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        do {
            try handle.write(contentsOf: Data(bytes))
            try handle.synchronize()
            try handle.close()
        } catch {
            unlink(temporary)
            throw Failure(description: "cannot write '\(path)': \(error.localizedDescription)")
        }
        return temporary
    }

    private static func move(_ source: String, to destination: String) throws {
        guard rename(source, destination) == 0 else {
            throw Failure(
                description: "cannot move '\(source)' to '\(destination)': \(String(cString: strerror(errno)))"
            )
        }
    }

    static func pem(label: String, der: [UInt8]) -> String {
        let body = Data(der).base64EncodedString(options: [
            .lineLength64Characters, .endLineWithLineFeed,
        ])
        return "-----BEGIN \(label)-----\n\(body)\n-----END \(label)-----\n"
    }

    /// BoringSSL exports a key in its traditional form, so the PEM label depends on its structure:
    /// SEC1 (`version 1`), PKCS#1 (`version 0, modulus`) or PKCS#8 (`version 0, AlgorithmIdentifier`).
    static func privateKeyLabel(der: [UInt8]) throws -> String {
        guard der.count > 2, der[0] == 0x30 else {
            throw Failure(description: "the private key is not a DER SEQUENCE")
        }
        var index = 1
        let lengthByte = der[index]
        index += lengthByte & 0x80 == 0 ? 1 : 1 + Int(lengthByte & 0x7F)
        guard index + 3 < der.count, der[index] == 0x02, der[index + 1] == 0x01 else {
            throw Failure(description: "the private key has no version field")
        }
        switch (der[index + 2], der[index + 3]) {
        case (1, _): return "EC PRIVATE KEY"
        case (0, 0x30): return "PRIVATE KEY"
        case (0, 0x02): return "RSA PRIVATE KEY"
        default: throw Failure(description: "the private key's format is not SEC1, PKCS#1 or PKCS#8")
        }
    }
}
