import ArgumentParser
import EdgeConfig
import EdgeGatewayPairingKit
import EdgeIdentity
import EdgePairing
import Foundation
import X509

struct TrustCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "trust",
        abstract: "Pin the certificates of peers this gateway replicates with (server_trust = \"trust-store\").",
        subcommands: [Add.self, List.self, Remove.self]
    )

    struct StoreOptions: ParsableArguments {
        @OptionGroup var configuration: ConfigurationOptions

        func store() throws -> TrustedPeerStore {
            // Only the data directory is needed; pinning a peer must not wait for an unrelated file.
            TrustedPeerStore(dataDirectory: try configuration.load(unusableFiles: .disableEntry).node.dataDirectory)
        }
    }

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Trust a peer's certificate, from its pairing payload or from what host:port presents.",
            discussion: """
                With a pairing payload (edgegw://pair?…), every address it lists is pinned to the certificate \
                digest it carries. With host:port, the certificate the server presents now is shown and, once \
                confirmed, pinned: trust on first use. Compare the fingerprint with the one `edge-gateway cert \
                show` prints on the peer before confirming.
                """
        )

        @OptionGroup var options: StoreOptions

        @Argument(help: ArgumentHelp("A pairing payload, or host:port.", valueName: "payload|host:port"))
        var peer: String

        @Flag(help: "Confirm without asking, for scripts.")
        var yes = false

        func run() async throws {
            let store = try options.store()
            if peer.hasPrefix(PairingPayload.scheme + ":") {
                let payload: PairingPayload
                do {
                    payload = try PairingPayload(decoding: peer)
                } catch {
                    printError("not a valid pairing payload: \(error)")
                    throw ExitCode(2)
                }
                let digest = try CertificateFingerprint(digestBytes: payload.certificateSHA256, algorithm: .sha256)
                for address in payload.addresses {
                    let endpoint = TrustedPeerStore.endpoint(host: address, port: payload.port)
                    try store.add(.init(endpoint: endpoint, sha256: digest, label: payload.nodeName))
                    print("Trusted \(endpoint) (\(payload.nodeName)): SHA-256 \(digest.colonHex)")
                }
                return
            }
            guard let (host, port) = TrustedPeerStore.parseEndpoint(peer) else {
                printError("expected a pairing payload (edgegw://pair?…) or host:port, got '\(peer)'")
                throw ExitCode(2)
            }
            let chain: [[UInt8]]
            do {
                chain = try await CertificateProbe.presentedCertificateChain(host: host, port: port)
            } catch {
                printError("\(error)")
                throw ExitCode(1)
            }
            let leaf = chain[0]
            let digest = CertificateFingerprint(derBytes: leaf, algorithm: .sha256)
            let subject = (try? Certificate(derEncoded: leaf))?.subject.description ?? "(unparseable subject)"
            print("\(TrustedPeerStore.endpoint(host: host, port: port)) presents:")
            print("  Subject:  \(subject)")
            print("  SHA-256:  \(digest.colonHex)")
            if !yes {
                guard Self.confirm("Trust this certificate for \(host):\(port)? [y/N] ") else {
                    printError("not trusted")
                    throw ExitCode(1)
                }
            }
            let endpoint = TrustedPeerStore.endpoint(host: host, port: port)
            try store.add(.init(endpoint: endpoint, sha256: digest, label: subject))
            print("Trusted \(endpoint): SHA-256 \(digest.colonHex)")
        }

        static func confirm(_ question: String) -> Bool {
            FileHandle.standardOutput.write(Data(question.utf8))
            guard let answer = readLine(strippingNewline: true) else { return false }
            return ["y", "yes"].contains(answer.trimmingCharacters(in: .whitespaces).lowercased())
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the trusted peers and their pins.")

        @OptionGroup var options: StoreOptions

        @Flag(help: "Print JSON instead of a table.")
        var json = false

        func run() throws {
            let entries = try options.store().entries()
            if json {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
                encoder.dateEncodingStrategy = .iso8601
                print(String(decoding: try encoder.encode(entries), as: UTF8.self))
                return
            }
            guard !entries.isEmpty else {
                print("No trusted peers. Add one with `edge-gateway trust add <payload|host:port>`.")
                return
            }
            let width = entries.map(\.endpoint.count).max() ?? 0
            let dates = ISO8601DateFormatter()
            for entry in entries {
                let padding = String(repeating: " ", count: width - entry.endpoint.count)
                print(
                    "\(entry.endpoint)\(padding)  \(entry.sha256)  \(dates.string(from: entry.addedAt))  \(entry.label)"
                )
            }
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Forget the pin for host:port.")

        @OptionGroup var options: StoreOptions

        @Argument(help: ArgumentHelp("The endpoint, as `trust list` shows it.", valueName: "host:port"))
        var endpoint: String

        func run() throws {
            guard let (host, port) = TrustedPeerStore.parseEndpoint(endpoint) else {
                printError("expected host:port, got '\(endpoint)'")
                throw ExitCode(2)
            }
            let canonical = TrustedPeerStore.endpoint(host: host, port: port)
            guard try options.store().remove(endpoint: canonical) else {
                printError("no trusted certificate for \(canonical)")
                throw ExitCode(1)
            }
            print("Removed the pin for \(canonical)")
        }
    }
}
