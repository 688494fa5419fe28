import EdgePairing
import Foundation

/// The `edge-gateway` binary built next to this test bundle.
enum EdgeGatewayExecutable {
    static var path: String {
        // `swift test` runs the test bundle from the products directory, where the executable is built too.
        URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
            .appendingPathComponent("edge-gateway").path
    }
}

/// A gateway's files for one test: configuration, data directory and log.
struct GatewayFiles {
    let directory: URL
    var configuration: URL { directory.appendingPathComponent("gateway.toml") }
    var dataDirectory: URL { directory.appendingPathComponent("data") }
    var log: URL { directory.appendingPathComponent("gateway.log") }

    /// A TLS listener on every address and a port the system picks, advertised with DNS-SD; `tls` replaces
    /// the listener's generated identity (the `tls = …` lines).
    init(
        directory: URL, opsPort: Int, serviceType: String, instanceName: String,
        tls: String = "tls = \"self-signed\""
    ) throws {
        self.directory = directory
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try """
        [node]
        name = "lab-gateway"
        data_dir = "\(dataDirectory.path)"

        [ops]
        address = "127.0.0.1"
        port = \(opsPort)

        [[database]]
        name = "inventory"

        [[listener]]
        name = "lan"
        interface = "0.0.0.0"
        port = 0
        \(tls)
        auth = "none"
        databases = ["inventory"]
        dns_sd = true
        dns_sd_type = "\(serviceType)"
        dns_sd_name = "\(instanceName)"
        """.write(to: configuration, atomically: true, encoding: .utf8)
    }

    var logText: String {
        (try? String(contentsOf: log, encoding: .utf8)) ?? ""
    }

    /// The pairing payload the gateway logs once its listener is bound: it carries the real port, the
    /// certificate's SHA-256 and the node ID, the values the advertisement must repeat.
    func waitForPairingPayload(timeout: Duration = .seconds(30)) async throws -> PairingPayload {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            for line in logText.split(separator: "\n") where line.contains("pairing payload") {
                // logfmt quotes the value, which contains '='.
                if let range = line.range(of: #"payload="[^"]+""#, options: .regularExpression) {
                    return try PairingPayload(decoding: String(line[range].dropFirst("payload=\"".count).dropLast()))
                }
            }
            try await Task.sleep(for: .milliseconds(200))
        }
        throw LabError(step: "gateway start", detail: "no pairing payload logged:\n\(logText)")
    }
}

/// One line of `avahi-browse --parsable --resolve`: `=;iface;proto;name;type;domain;host;address;port;"txt"…`.
struct AvahiBrowseEntry {
    var name: String
    var host: String
    var address: String
    var port: Int
    var txt: [String]

    init?(line: Substring) {
        let fields = line.split(separator: ";", maxSplits: 9, omittingEmptySubsequences: false)
        guard fields.count >= 9, fields[0] == "=", let port = Int(fields[8]) else { return nil }
        name = Self.unescaped(String(fields[3]))
        host = String(fields[6])
        address = String(fields[7])
        self.port = port
        let txtField = fields.count > 9 ? String(fields[9]) : ""
        txt = txtField.split(separator: "\" \"").map {
            $0.trimmingCharacters(in: CharacterSet(charactersIn: "\""))
        }.filter { !$0.isEmpty }
    }

    /// avahi-browse writes some characters of names as `\DDD` (decimal), such as `\032` for a space.
    static func unescaped(_ text: String) -> String {
        var bytes: [UInt8] = []
        var characters = Array(text.utf8)[...]
        while let byte = characters.first {
            characters = characters.dropFirst()
            if byte == UInt8(ascii: "\\"), characters.count >= 3,
                let value = UInt8(String(decoding: characters.prefix(3), as: UTF8.self))
            {
                bytes.append(value)
                characters = characters.dropFirst(3)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
