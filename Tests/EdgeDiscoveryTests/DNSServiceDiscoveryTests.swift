import EdgeDiscovery
import EdgeGatewayTestSupport
import EdgePairing
import Foundation
import GatewayConfigurationFile
import Testing

/// End to end through real avahi-daemons, inside network namespaces made for the test: the gateway advertises in
/// namespace A, and avahi-browse and `edge-gateway discover` look for it from namespace B.
@Suite(
    "DNS-SD between two network namespaces",
    .serialized,
    // Skipped, with this reason in the test report, where namespaces cannot be made (not root, no iproute2 or
    // avahi, a container without CAP_SYS_ADMIN). The test never falls back to the host's network.
    .enabled(
        if: NamespaceLab.unavailableReason == nil,
        "SKIPPED: the DNS-SD namespace lab is unavailable: \(NamespaceLab.unavailableReason ?? "")")
)
struct DNSServiceDiscoveryTests {
    /// Couchbase Lite's sample type: longer than RFC 6335's 15 characters, which the gateway must accept.
    static let serviceType = "_cblistservicesync._tcp"

    @Test(
        "a gateway in A is browsable from B with its address, port, TXT records, and again after an avahi-daemon restart"
    )
    func advertisesAcrossNamespaces() async throws {
        let lab = try await NamespaceLab.make()
        defer { lab.tearDown() }
        var gateway = try GatewayProcess.advertised(
            directory: lab.root.appendingPathComponent("gateway"), in: lab.a, serviceType: Self.serviceType,
            instanceName: "lab-gateway-a")
        try await gateway.start(arguments: ["--data-dir", gateway.dataDirectory.path])
        defer { _ = gateway.terminate() }
        let payload = try await gateway.waitForPairingPayload()
        let nodeID = try String(contentsOf: gateway.dataDirectory.appendingPathComponent("node-id"), encoding: .utf8)
            .trimmingCharacters(in: .newlines)
        #expect(payload.nodeID.uuidString.lowercased() == nodeID)

        let expectedTXT = [
            "id=\(nodeID)", "db=inventory", "tls=on", "s256=\(Base64URL.encode(payload.certificateSHA256))",
            "proto=BLIP_3+CBMobile_3",
        ]
        let entry = try await browseFromB(lab, name: "lab-gateway-a")
        #expect(entry.address == lab.a.address)
        #expect(entry.port == payload.port)
        #expect(entry.txt == expectedTXT, "\(entry.txt)")

        let discovered = try await discoverFromB(lab).first { $0["name"] as? String == "lab-gateway-a" }
        let service = try #require(discovered, "edge-gateway discover did not list the gateway")
        #expect(service["address"] as? String == lab.a.address)
        #expect(service["port"] as? Int == payload.port)
        #expect(service["interface"] as? String == lab.b.interface)
        let txt = try #require(service["txt"] as? [String: String])
        #expect(txt["id"] == nodeID)
        #expect(txt["db"] == "inventory")
        #expect(txt["tls"] == "on")
        #expect(txt["s256"] == Base64URL.encode(payload.certificateSHA256))
        #expect(txt["proto"] == "BLIP_3+CBMobile_3")

        let health = try await lab.run(
            in: lab.a, [EdgeGatewayExecutable.url.path, "health", "--config", gateway.configPath])
        #expect(health.output.hasPrefix("healthy: HTTP 200, status up"), "\(health.output)")

        // A restarted daemon has forgotten every service: the gateway must register again on its own.
        try await lab.restartDaemonOfA()
        let again = try await browseFromB(lab, name: "lab-gateway-a")
        #expect(again.port == payload.port)
        #expect(again.txt == expectedTXT)

        // Shutdown withdraws the service (goodbye packets), so B's cache forgets it at once.
        _ = gateway.terminate()
        #expect(gateway.logText.contains("DNS-SD advertising stopped"))
        var stillListed = true
        for _ in 0..<25 where stillListed {
            let browse = try await lab.run(
                in: lab.b, ["avahi-browse", "--parsable", "--resolve", "--terminate", Self.serviceType])
            stillListed = browse.output.contains("lab-gateway-a")
            if stillListed { try await Task.sleep(for: .milliseconds(200)) }
        }
        #expect(!stillListed, "the service was not withdrawn on shutdown")
    }

    @Test("a second gateway announcing the same name in A is renamed to the next alternative")
    func collisionPicksAlternativeName() async throws {
        let lab = try await NamespaceLab.make()
        defer { lab.tearDown() }
        var gateways: [GatewayProcess] = []
        defer {
            for index in gateways.indices { _ = gateways[index].terminate() }
        }
        var payloads: [PairingPayload] = []
        for (index, opsPort) in [4985, 4986].enumerated() {
            var gateway = try GatewayProcess.advertised(
                directory: lab.root.appendingPathComponent("gateway-\(index)"), in: lab.a, opsPort: opsPort,
                serviceType: "_edgegateway._tcp", instanceName: "Shop Gateway")
            try await gateway.start()
            gateways.append(gateway)
            payloads.append(try await gateway.waitForPairingPayload())
            // The first must own the name before the second probes for it.
            if index == 0 { _ = try await browseFromB(lab, name: "Shop Gateway", type: "_edgegateway._tcp") }
        }
        let renamed = try await browseFromB(lab, name: "Shop Gateway #2", type: "_edgegateway._tcp")
        #expect(renamed.port == payloads[1].port)
        let original = try await browseFromB(lab, name: "Shop Gateway", type: "_edgegateway._tcp")
        #expect(original.port == payloads[0].port)
    }

    @Test("a reloaded certificate (tls = \"file\") is advertised: the s256 record follows it")
    func reloadedCertificateIsAdvertised() async throws {
        let lab = try await NamespaceLab.make()
        defer { lab.tearDown() }
        let root = lab.root.appendingPathComponent("reload")
        let first = try await Self.generatedIdentity(in: root.appendingPathComponent("first"))
        let second = try await Self.generatedIdentity(in: root.appendingPathComponent("second"))
        let served = root.appendingPathComponent("served")
        try FileManager.default.createDirectory(at: served, withIntermediateDirectories: true)
        let certificate = served.appendingPathComponent("gateway.crt").path
        let key = served.appendingPathComponent("gateway.key").path
        try FileManager.default.copyItem(atPath: first.certificate, toPath: certificate)
        try FileManager.default.copyItem(atPath: first.key, toPath: key)
        var gateway = try GatewayProcess.advertised(
            directory: root.appendingPathComponent("gateway"), in: lab.a, serviceType: Self.serviceType,
            instanceName: "lab-reload"
        ) { listener in
            listener["tls"] = "file"
            listener["tls_certificate"] = .string(certificate)
            listener["tls_key"] = .string(key)
        }
        try await gateway.start()
        defer { _ = gateway.terminate() }
        let payload = try await gateway.waitForPairingPayload()
        #expect(Base64URL.encode(payload.certificateSHA256) == first.s256)
        #expect(try await browseFromB(lab, name: "lab-reload").txt.contains("s256=\(first.s256)"))

        for (source, target) in [(second.key, key), (second.certificate, certificate)] {
            try FileManager.default.copyItem(atPath: source, toPath: target + ".new")
            #expect(rename(target + ".new", target) == 0)
        }
        var advertised: [String] = []
        for _ in 0..<40 {
            advertised = (try? await browseFromB(lab, name: "lab-reload").txt) ?? []
            if advertised.contains("s256=\(second.s256)") { break }
            try await Task.sleep(for: .milliseconds(500))
        }
        #expect(advertised.contains("s256=\(second.s256)"), "\(advertised)\n\(gateway.logText)")
        #expect(gateway.logText.contains("DNS-SD records updated for the reloaded certificate"))
    }

    /// A certificate and key generated by the gateway's own `cert show` in a throwaway data directory, with the
    /// certificate's SHA-256 as base64url (as in the `s256` record).
    static func generatedIdentity(in directory: URL) async throws -> (certificate: String, key: String, s256: String) {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var file = GatewayTOML(dataDirectory: directory.appendingPathComponent("data").path)
        file.listeners = [GatewayTOML.listener(tls: "self-signed")]
        let configuration = try file.write(to: directory.appendingPathComponent("gateway.toml").path)
        let text = try await EdgeGatewayExecutable.run(["cert", "show", "--config", configuration]).standardOutput
        let line = try #require(text.split(separator: "\n").first { $0.hasPrefix("SHA-256:") })
        let bytes = line.dropFirst("SHA-256:".count).trimmingCharacters(in: .whitespaces)
            .split(separator: ":").compactMap { UInt8($0, radix: 16) }
        let identity = directory.appendingPathComponent("data/identity")
        return (
            identity.appendingPathComponent("identity-cert.pem").path,
            identity.appendingPathComponent("identity-key.pem").path,
            Base64URL.encode(bytes)
        )
    }

    /// Polls avahi-browse in B until `name` is resolved.
    private func browseFromB(
        _ lab: NamespaceLab, name: String, type: String = DNSServiceDiscoveryTests.serviceType
    ) async throws -> AvahiBrowseEntry {
        var lastOutput = ""
        for _ in 0..<30 {
            let browse = try await lab.run(in: lab.b, ["avahi-browse", "--parsable", "--resolve", "--terminate", type])
            lastOutput = browse.output + browse.error
            if let entry = browse.output.split(separator: "\n").compactMap(AvahiBrowseEntry.init(line:))
                .first(where: { $0.name == name })
            {
                return entry
            }
            try await Task.sleep(for: .milliseconds(500))
        }
        throw LabError(step: "avahi-browse in B", detail: "\(name) not found; last output:\n\(lastOutput)")
    }

    private func discoverFromB(_ lab: NamespaceLab) async throws -> [[String: Any]] {
        let outcome = try await lab.run(
            in: lab.b,
            [EdgeGatewayExecutable.url.path, "discover", "--json", "--type", Self.serviceType, "--timeout", "5"])
        guard outcome.status == 0 else {
            throw LabError(step: "edge-gateway discover", detail: outcome.error)
        }
        return try JSONSerialization.jsonObject(with: Data(outcome.output.utf8)) as? [[String: Any]] ?? []
    }
}

/// Needs no namespace: with the bus pointed at a path where nothing listens, nothing can be advertised anywhere.
@Suite("DNS-SD without avahi-daemon")
struct DNSServiceDiscoveryWithoutDaemonTests {
    @Test("the gateway serves sync, logs one line about avahi-daemon and reports discovery as degraded")
    func degradesWithoutDaemon() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "edgw-nodaemon-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        var gateway = try GatewayProcess.advertised(
            directory: directory, bus: "unix:path=\(directory.path)/no-bus", serviceType: "_edgegateway._tcp",
            instanceName: "no-daemon")
        try await gateway.start()
        defer { _ = gateway.terminate() }

        let payload = try await gateway.waitForPairingPayload()
        #expect(payload.port > 0)
        var health = ""
        for _ in 0..<50 {
            let probe = try await runExternalTool(
                EdgeGatewayExecutable.url.path, ["health", "--config", gateway.configPath])
            health = probe.output
            if health.contains("discovery dns-sd") { break }
            try await Task.sleep(for: .milliseconds(200))
        }
        #expect(health.hasPrefix("healthy: HTTP 200, status degraded"), "\(health)")
        #expect(health.contains("discovery dns-sd: avahi-daemon unreachable"), "\(health)")
        #expect(!health.contains("listener lan"), "the listener must stay up: \(health)")

        // Past one retry interval (5 s) the warning is still a single line.
        try await Task.sleep(for: .seconds(6))
        #expect(gateway.process?.isRunning == true)
        let warnings = gateway.logText.split(separator: "\n").filter { $0.contains("avahi-daemon cannot be reached") }
        #expect(warnings.count == 1, "\(gateway.logText)")
    }
}
