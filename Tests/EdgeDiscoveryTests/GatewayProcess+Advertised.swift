import EdgeGatewayTestSupport
import EdgePairing
import Foundation
import GatewayConfigurationFile

extension GatewayProcess {
    /// A gateway whose TLS listener, on every address and a port the system picks, is advertised with DNS-SD as
    /// `instanceName` of `serviceType`: in `node`'s namespace, on its D-Bus, or on the host's loopback with the
    /// D-Bus `bus` (a path where no avahi-daemon listens).
    static func advertised(
        directory: URL, in node: NamespaceLab.Node? = nil, bus: String? = nil, opsPort: Int? = nil,
        serviceType: String, instanceName: String,
        listener configureListener: (inout GatewayTOML.Table) -> Void = {
            _ in
        }
    ) throws -> GatewayProcess {
        try GatewayProcess(
            directory: directory, network: node.map { .init(namespace: $0.namespace, address: $0.address) },
            environment: ["DBUS_SYSTEM_BUS_ADDRESS": node?.busAddress ?? bus ?? ""].filter { !$0.value.isEmpty }
        ) { file in
            file.node["name"] = "lab-gateway"
            if let opsPort { file.ops?["port"] = .integer(opsPort) }
            var listener = GatewayTOML.listener(interface: "0.0.0.0", tls: "self-signed")
            listener["dns_sd"] = true
            listener["dns_sd_type"] = .string(serviceType)
            listener["dns_sd_name"] = .string(instanceName)
            configureListener(&listener)
            file.listeners = [listener]
        }
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
