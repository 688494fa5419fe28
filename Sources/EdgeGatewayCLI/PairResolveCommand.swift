import ArgumentParser
import EdgeGatewayPairingKit
import EdgeIdentity
import Foundation

/// `pair resolve`: what a device does with a scanned code, for scripts and tests.
struct PairResolveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "resolve",
        abstract: "Find the gateway a pairing payload names and verify its certificate, as a device does.",
        discussion: """
            The payload's addresses are tried in order; the first that completes a TLS handshake with a \
            certificate whose digests are the payload's is the endpoint printed. That certificate is written \
            with --der or --pem, ready to pin. If no address answers, every address is listed with its reason; \
            if the certificate does not match, both fingerprints are shown; a malformed payload is named as \
            such. Every failure exits 1 and writes no file.
            """
    )

    @Argument(help: ArgumentHelp("The scanned pairing payload.", valueName: "edgegw://pair?…"))
    var payload: String

    @Option(help: ArgumentHelp("Write the verified certificate here, DER encoded.", valueName: "file"))
    var der: String?

    @Option(help: ArgumentHelp("Write the verified certificate here, PEM encoded.", valueName: "file"))
    var pem: String?

    @Flag(help: "Print the endpoint, fingerprint and certificate as JSON.")
    var json = false

    @Option(help: "Seconds to wait for each address (connection and TLS handshake).")
    var timeout: Int = 10

    func validate() throws {
        if der != nil, pem != nil {
            throw ValidationError("--der and --pem are alternatives; give one of them.")
        }
        guard timeout > 0 else { throw ValidationError("--timeout must be at least 1 second.") }
    }

    func run() async throws {
        let gateway: PairedGateway
        do {
            gateway = try await PairedGateway.resolve(scannedPayload: payload, timeout: .seconds(timeout))
        } catch {
            printError("\(error)")
            throw ExitCode(1)
        }
        if let der {
            try write(Data(gateway.certificateDER), to: der)
        }
        if let pem {
            try write(Data(gateway.certificatePEM.utf8), to: pem)
        }
        guard json else {
            print(gateway.endpoint.absoluteString)
            return
        }
        let object: [String: Any] = [
            "endpoint": gateway.endpoint.absoluteString,
            "address": gateway.address,
            "node": gateway.payload.nodeName,
            "node_id": gateway.payload.nodeID.uuidString.lowercased(),
            "sha256": CertificateFingerprint(derBytes: gateway.certificateDER, algorithm: .sha256).colonHex,
            "certificate_pem": gateway.certificatePEM,
        ]
        let data = try JSONSerialization.data(
            withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        print(String(decoding: data, as: UTF8.self))
    }

    private func write(_ data: Data, to path: String) throws {
        do {
            try data.write(to: URL(fileURLWithPath: path), options: .atomic)
        } catch {
            printError("cannot write '\(path)': \(error.localizedDescription)")
            throw ExitCode(1)
        }
    }
}
