import ArgumentParser
import EdgeConfig
import EdgeIdentity
import EdgePairing
import Foundation
import Logging
import NetworkInterfaces

struct PairCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pair",
        abstract: "Pair a Couchbase Lite app with this gateway: show the QR code, or resolve a scanned payload.",
        subcommands: [PairShowCommand.self, PairResolveCommand.self],
        defaultSubcommand: PairShowCommand.self
    )
}

/// `pair show`, also plain `pair`: the QR code and payload of one of this gateway's listeners.
struct PairShowCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show",
        abstract: "Show the QR code that pairs a Couchbase Lite app with this gateway.",
        discussion: """
            The code holds an edgegw://pair URI (docs/pairing.md): the listener's addresses, port and \
            database, and the SHA-256 digest of its certificate, which the app pins. After the code, the URI \
            and the colon-hex SHA-256 fingerprint are printed so they can be compared or typed in. \
            A listener with tls = "off" has no certificate to pin, so there is nothing to pair with.
            """
    )

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case terminal, text, json, png, svg
    }

    @OptionGroup var options: ConfigurationOptions

    @Option(
        name: .customLong("db"),
        help: "Database to pair with. Defaults to the listener's first database.")
    var database: String?

    @Option(help: "Listener to pair with. Defaults to the first listener in the configuration.")
    var listener: String?

    @Option(help: "Advertise this IP address or host name instead of the listener's addresses.")
    var address: String?

    @Option(help: "Advertise the addresses of this network interface instead of the listener's.")
    var interface: String?

    @Option(help: "terminal (QR code in half blocks), text (the URI), json, png or svg.")
    var format: Format = .terminal

    @Option(help: "Write to this file instead of standard output (required for png).")
    var output: String?

    func validate() throws {
        if address != nil, interface != nil {
            throw ValidationError("--address and --interface are alternatives; give one of them.")
        }
        if format == .png, output == nil {
            throw ValidationError("--format png writes binary data; give --output FILE.")
        }
    }

    func run() throws {
        let configuration = try options.load()
        let target = try SelectedListener(
            configuration: configuration, listenerName: listener, database: database)
        let identity = try target.loadIdentity()
        let nodeID = try target.loadNodeID()
        let addresses = try advertisedAddresses(listener: target.listener)
        let payload: PairingPayload
        do {
            payload = try PairingPayload(
                identity: identity,
                addresses: addresses,
                port: target.listener.port,
                database: target.database,
                nodeName: configuration.node.name,
                nodeID: nodeID.uuid
            )
        } catch {
            printError("cannot build the pairing payload: \(error)")
            throw ExitCode(1)
        }
        try write(try render(payload))
    }

    private func advertisedAddresses(listener: ListenerSettings) throws -> [String] {
        if let address { return [address] }
        let source = interface ?? listener.interface
        let addresses = InterfaceAddress.reachableAddresses(forListenerInterface: source).map(
            \.description)
        guard !addresses.isEmpty else {
            printError(
                "no address a device could reach was found for '\(source)' (loopback and IPv6 link-local "
                    + "addresses are left out); give one with --address or --interface."
            )
            throw ExitCode(1)
        }
        return addresses
    }

    private func render(_ payload: PairingPayload) throws -> [UInt8] {
        let fingerprintLine = "SHA-256 \(payload.sha256ColonHex)\n"
        switch format {
        case .text:
            return Array("\(payload.uriString)\n".utf8)
        case .json:
            let object: [String: Any] = [
                "node": payload.nodeName,
                "node_id": payload.nodeID.uuidString.lowercased(),
                "payload": payload.uriString,
                "sha256": payload.sha256ColonHex,
                "urls": payload.addresses.indices.compactMap {
                    payload.url(forAddressAt: $0)?.absoluteString
                },
            ]
            let data = try JSONSerialization.data(
                withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
            return Array(data) + [0x0A]
        case .terminal:
            let code = try qrCode(payload)
            // Colours are pinned only on a terminal, where they make the code readable on light themes too;
            // files and pipes get the plain glyphs.
            let colors: QRCode.TerminalColors =
                output == nil && isatty(STDOUT_FILENO) == 1
                    && ProcessInfo.processInfo.environment["NO_COLOR"] == nil
                ? .forcedBlackAndWhite : .lightGlyphsOnTerminalBackground
            return Array(
                (code.terminalRendering(colors: colors) + "\n" + payload.uriString + "\n" + fingerprintLine)
                    .utf8)
        case .svg:
            return Array(try qrCode(payload).svgRendering().utf8)
        case .png:
            return try qrCode(payload).pngRendering()
        }
    }

    private func qrCode(_ payload: PairingPayload) throws -> QRCode {
        do {
            return try QRCode(encoding: payload.uriString)
        } catch {
            printError("cannot make the QR code: \(error)")
            throw ExitCode(1)
        }
    }

    private func write(_ bytes: [UInt8]) throws {
        guard let output else {
            FileHandle.standardOutput.write(Data(bytes))
            return
        }
        do {
            try Data(bytes).write(to: URL(fileURLWithPath: output), options: .atomic)
        } catch {
            printError("cannot write '\(output)': \(error.localizedDescription)")
            throw ExitCode(1)
        }
    }
}

/// The listener and database a pairing or certificate command is about, and how to find its TLS identity.
struct SelectedListener {
    let listener: ListenerSettings
    let database: String
    let configuration: GatewayConfiguration

    init(configuration: GatewayConfiguration, listenerName: String?, database: String?) throws {
        self.configuration = configuration
        let names = configuration.listeners.map(\.name)
        if let listenerName {
            guard let match = configuration.listeners.first(where: { $0.name == listenerName }) else {
                printError(
                    "no listener named '\(listenerName)'; configured listeners: "
                        + (names.isEmpty ? "none" : names.joined(separator: ", "))
                )
                throw ExitCode(2)
            }
            listener = match
        } else {
            guard let first = configuration.listeners.first else {
                printError("the configuration has no [[listener]]; there is nothing to pair with.")
                throw ExitCode(1)
            }
            listener = first
        }
        if let database {
            guard listener.databases.contains(database) else {
                printError(
                    "listener '\(listener.name)' does not serve a database named '\(database)'; it serves: "
                        + listener.databases.joined(separator: ", ")
                )
                throw ExitCode(2)
            }
            self.database = database
        } else {
            guard let first = listener.databases.first else {
                printError("listener '\(listener.name)' serves no database.")
                throw ExitCode(1)
            }
            self.database = first
        }
    }

    /// Where generated and imported identities live: `<data_dir>/identity`.
    static func identityDirectory(dataDirectory: String) -> String {
        (dataDirectory as NSString).appendingPathComponent("identity")
    }

    var identityDirectory: String {
        Self.identityDirectory(dataDirectory: configuration.node.dataDirectory)
    }

    /// Identity notices (first generation, coming expiry) go to standard error, never into the output.
    var logger: Logger {
        var logger = Logger(
            label: "edge-gateway", factory: { StreamLogHandler.standardError(label: $0) })
        logger.logLevel = .notice
        return logger
    }

    /// The node's ID, generated and stored on first use like the running gateway does, so that a code printed
    /// before the first start names the same node.
    func loadNodeID() throws -> NodeID {
        do {
            return try NodeID.loadOrCreate(dataDirectory: configuration.node.dataDirectory)
        } catch {
            printError("\(error)")
            throw ExitCode(1)
        }
    }

    /// The identity the listener serves: generated on first use for self-signed, read from the configured files
    /// otherwise.
    func loadIdentity() throws -> TLSIdentity {
        do {
            switch listener.tls {
            case .off:
                printError(
                    "listener '\(listener.name)' has tls = \"off\": it has no certificate, so there is no "
                        + "certificate digest to pair with. Enable TLS on the listener to pair devices."
                )
                throw ExitCode(1)
            case .selfSigned:
                return try TLSIdentity.loadOrCreateSelfSigned(
                    directory: identityDirectory,
                    commonName: configuration.node.name,
                    logger: logger
                )
            case .pemFiles(let certificate, let privateKey):
                return try TLSIdentity.load(certificatePEMFile: certificate, keyPEMFile: privateKey)
            case .pkcs12File(let path, let password):
                return try TLSIdentity.load(pkcs12File: path, password: password?.value ?? "")
            }
        } catch let error as IdentityError {
            printError("\(error)")
            throw ExitCode(1)
        }
    }
}
