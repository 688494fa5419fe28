import EdgeGatewayTestSupport
import Foundation
import GatewayConfigurationFile
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Two gateways as real child processes: A serves a self-signed listener, B replicates to it upstream, trusting
/// it only through A's pairing payload or a pin recorded with `trust add`.
@Suite("Pairing and pinning between two gateways")
struct PairedUpstreamTests {
    struct TestFailure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// A gateway whose listener `lan` (on `port`, self-signed) serves `inventory` to anyone.
    static func listenerNode(directory: URL, port: Int) throws -> GatewayProcess {
        try GatewayProcess(directory: directory) { file in
            file.node["name"] = "node-a"
            file.listeners = [GatewayTOML.listener(port: port, tls: "self-signed")]
        }
    }

    /// A gateway without listeners that pushes `inventory` continuously to `target` (the `[[upstream]]`'s
    /// `url` or `pairing`, and how far it trusts the certificate).
    static func upstreamNode(directory: URL, target: GatewayTOML.Table) throws -> GatewayProcess {
        try GatewayProcess(directory: directory) { file in
            file.node["name"] = "node-b"
            file.listeners = []
            var upstream = GatewayTOML.upstream(name: "a", type: "push")
            for (key, value) in target.entries { upstream[key] = value }
            upstream["max_attempt_wait"] = "1s"
            file.upstreams = [upstream]
        }
    }

    static func eventually(_ what: String, _ condition: () async throws -> Bool) async throws {
        for _ in 0..<300 {
            if try await condition() { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw TestFailure("timed out waiting for \(what)")
    }

    @Test("B syncs to A through A's pairing payload; after A's cert rotate, B refuses A naming both fingerprints")
    func pairingPayloadThenRotation() async throws {
        let root = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        let listenerPort = try freeLoopbackPort()
        var a = try Self.listenerNode(directory: root.appendingPathComponent("a"), port: listenerPort)
        let pair = try await a.run(["pair", "--format", "text", "--address", "127.0.0.1"])
        #expect(pair.status == 0, "\(pair.standardError)")
        let payload = try #require(pair.standardOutput.split(separator: "\n").first { $0.hasPrefix("edgegw://") })
        let originalFingerprint = try await PairingCommandTests.showSHA256(config: a.configPath)

        var b = try Self.upstreamNode(
            directory: root.appendingPathComponent("b"), target: ["pairing": .string(String(payload))])
        let check = try await EdgeGatewayExecutable.run(["config", "check", b.configPath])
        #expect(check.status == 0, "\(check.standardError)")
        #expect(try await b.run(["docs", "put", "order-1", #"{"qty": 3}"#]).status == 0)

        try await a.start()
        defer { _ = a.terminate() }
        try await b.start()
        defer { _ = b.terminate() }
        try await Self.eventually("order-1 to reach A") {
            try await a.run(["docs", "get", "order-1"]).standardOutput.contains(#""qty""#)
        }

        _ = a.terminate()
        let rotate = try await a.run(["cert", "rotate"])
        #expect(rotate.status == 0, "\(rotate.standardError)")
        let rotatedFingerprint = try await PairingCommandTests.showSHA256(config: a.configPath)
        #expect(rotatedFingerprint != originalFingerprint)
        try await a.start()

        do {
            try await Self.eventually("B to refuse the rotated certificate") {
                let health = try await b.health()
                return health.contains(originalFingerprint) && health.contains(rotatedFingerprint)
            }
        } catch {
            Issue.record("B's health: \(try await b.health())")
            throw error
        }
        #expect(try await b.health().contains(#""status":"down""#))
    }

    @Test("pair resolve prints A's endpoint and writes the certificate it verified; unreachable or forged: exit 1")
    func resolveCommand() async throws {
        let root = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        let listenerPort = try freeLoopbackPort()
        var a = try Self.listenerNode(directory: root.appendingPathComponent("a"), port: listenerPort)
        let pair = try await a.run(["pair", "--format", "text", "--address", "127.0.0.1"])
        #expect(pair.status == 0, "\(pair.standardError)")
        let payload = try #require(pair.standardOutput.split(separator: "\n").first.map(String.init))
        let fingerprint = try await PairingCommandTests.showSHA256(config: a.configPath)

        let down = try await EdgeGatewayExecutable.run(["pair", "resolve", payload, "--timeout", "2"])
        #expect(down.status == 1)
        #expect(down.standardOutput.isEmpty)
        #expect(down.standardError.contains("unreachable at every address"), "\(down.standardError)")
        #expect(down.standardError.contains("127.0.0.1:\(listenerPort)"), "\(down.standardError)")

        try await a.start()
        defer { _ = a.terminate() }
        let der = root.appendingPathComponent("verified.der")
        let resolved = try await EdgeGatewayExecutable.run(["pair", "resolve", payload, "--der", der.path, "--json"])
        #expect(resolved.status == 0, "\(resolved.standardError)")
        let json = try JSONSerialization.jsonObject(with: Data(resolved.standardOutput.utf8)) as? [String: String]
        #expect(json?["endpoint"] == "wss://127.0.0.1:\(listenerPort)/inventory")
        #expect(json?["sha256"] == fingerprint)
        let exported = root.appendingPathComponent("exported.der")
        #expect(try await a.run(["cert", "export", "--der", "--output", exported.path]).status == 0)
        #expect(try Data(contentsOf: der) == Data(contentsOf: exported))

        let pem = root.appendingPathComponent("verified.pem")
        let plain = try await EdgeGatewayExecutable.run(["pair", "resolve", payload, "--pem", pem.path])
        #expect(plain.standardOutput == "wss://127.0.0.1:\(listenerPort)/inventory\n")
        let exportedPEM = try await a.run(["cert", "export", "--pem"])
        #expect(try String(contentsOf: pem, encoding: .utf8) == exportedPEM.standardOutput)

        let forgedDigest = PairingCommandTests.base64URL(
            colonHex: Array(repeating: "AB", count: 32).joined(separator: ":"))
        let forged = payload.replacingOccurrences(
            of: "s256=\(try #require(PairingCommandTests.sha256Parameter(payload)))", with: "s256=\(forgedDigest)")
        let refused = try await EdgeGatewayExecutable.run([
            "pair", "resolve", forged, "--der", root.appendingPathComponent("no.der").path,
        ])
        #expect(refused.status == 1)
        #expect(refused.standardError.contains(fingerprint), "\(refused.standardError)")
        #expect(refused.standardError.contains("pair again"))
        #expect(!FileManager.default.fileExists(atPath: root.appendingPathComponent("no.der").path))

        let unknown = try await EdgeGatewayExecutable.run(["pair", "resolve", payload + "&x=1"])
        #expect(unknown.status == 1)
        #expect(unknown.standardError.contains("unknown parameter 'x'"))
    }

    @Test("trust add host:port pins what A presents (trust on first use); trust-store upstreams are held to it")
    func trustOnFirstUse() async throws {
        let root = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        let listenerPort = try freeLoopbackPort()
        var a = try Self.listenerNode(directory: root.appendingPathComponent("a"), port: listenerPort)
        var b = try Self.upstreamNode(
            directory: root.appendingPathComponent("b"),
            target: ["url": "wss://127.0.0.1:\(listenerPort)/inventory", "server_trust": "trust-store"])
        try await a.start()
        defer { _ = a.terminate() }

        let refused = try await b.run(["trust", "add", "127.0.0.1:\(listenerPort)"])
        #expect(refused.status == 1, "no confirmation on an empty standard input must not trust")
        #expect(try await !b.run(["trust", "list", "--json"]).standardOutput.contains("127.0.0.1"))

        let added = try await b.run(["trust", "add", "127.0.0.1:\(listenerPort)", "--yes"])
        #expect(added.status == 0, "\(added.standardError)")
        let fingerprint = try await PairingCommandTests.showSHA256(config: a.configPath)
        #expect(added.standardOutput.contains(fingerprint))
        #expect(
            try await b.run(["trust", "list"]).standardOutput.contains("127.0.0.1:\(listenerPort)  \(fingerprint)"))

        #expect(try await b.run(["docs", "put", "tofu", #"{"ok": true}"#]).status == 0)
        try await b.start()
        defer { _ = b.terminate() }
        try await Self.eventually("the document to reach A") {
            try await a.run(["docs", "get", "tofu"]).status == 0
        }

        #expect(try await b.run(["trust", "remove", "127.0.0.1:\(listenerPort)"]).status == 0)
        #expect(try await b.run(["trust", "remove", "127.0.0.1:\(listenerPort)"]).status == 1)
    }
}
