import ArgumentParser
import EdgeConfig
import EdgeDiscovery
import Foundation

struct DiscoverCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "discover",
        abstract: "List the gateways (or other DNS-SD services) that advertise on the local networks.",
        discussion: """
            Browses through the host's avahi-daemon (over the D-Bus system bus) for the given time and prints \
            each service found: instance name, host, address, port and TXT records. An EdgeGateway listener \
            advertises its node ID (id), databases (db), tls, certificate SHA-256 (s256) and protocol (proto). \
            Exits 1 when avahi-daemon cannot be reached.
            """
    )

    @Option(help: "Service type to browse for, such as _edgegateway._tcp or _cblistservicesync._tcp.")
    var type: String = ServiceDiscoverySettings.defaultServiceType

    @Option(help: "Seconds to listen for answers (0.1-300).")
    var timeout: Double = 3

    @Flag(help: "Print a JSON array instead of a table.")
    var json = false

    func validate() throws {
        guard (0.1...300).contains(timeout) else {
            throw ValidationError("--timeout must be between 0.1 and 300 seconds, got \(timeout).")
        }
    }

    func run() async throws {
        let services: [DiscoveredService]
        do {
            services = try await ServiceBrowser.browse(type: type, for: .milliseconds(Int(timeout * 1000)))
        } catch {
            printError("\(error)")
            throw ExitCode(1)
        }
        let output = json ? try Self.jsonText(services) : Self.table(services)
        FileHandle.standardOutput.write(Data(output.utf8))
    }

    static func jsonText(_ services: [DiscoveredService]) throws -> String {
        let objects: [[String: Any]] = services.map { service in
            var txt: [String: String] = [:]
            for entry in service.txt where txt[entry.key] == nil {
                txt[entry.key] = entry.value ?? ""
            }
            return [
                "name": service.name, "type": service.type, "domain": service.domain,
                "interface": service.interface, "host": service.host, "address": service.address,
                "port": service.port, "txt": txt,
            ]
        }
        let data = try JSONSerialization.data(
            withJSONObject: objects, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        return String(decoding: data, as: UTF8.self) + "\n"
    }

    static func table(_ services: [DiscoveredService]) -> String {
        guard !services.isEmpty else { return "no services found\n" }
        let header = ["NAME", "HOST", "ADDRESS", "PORT", "TXT"]
        let rows = services.map { service in
            [
                service.name, service.host, service.address, String(service.port),
                service.txt.map(\.description).joined(separator: " "),
            ]
        }
        let widths = header.indices.map { column in
            ([header] + rows).map { $0[column].count }.max() ?? 0
        }
        return ([header] + rows).map { row in
            row.enumerated().map { column, text in
                column == row.count - 1 ? text : text.padding(toLength: widths[column], withPad: " ", startingAt: 0)
            }.joined(separator: "  ")
        }.joined(separator: "\n") + "\n"
    }
}
