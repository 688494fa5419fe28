import EdgeGatewayTestSupport
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Two network namespaces, the edge's (A, 10.214.0.1) and the hub's (B, 10.214.0.2), joined through a third one
/// that holds the link between them: A's veth pair ends in R, B's too, and `LinkEmulator` passes frames from one
/// to the other with the configured delay, reordering and loss, or drops them all while the link is cut.
/// Nothing is created on the host's own network; deleting the namespaces deletes every interface.
final class BadNetworkLab {
    struct Impairment: CustomStringConvertible {
        var delayMilliseconds = 0
        var reorderPercent = 0
        var lossPercent = 0

        static let clean = Impairment()

        var description: String {
            "delay \(delayMilliseconds) ms, reorder \(reorderPercent) %, loss \(lossPercent) % each way"
        }
    }

    struct Node {
        let namespace: String
        let interface: String
        let address: String
    }

    /// Why the lab cannot run here, or nil when it can; decided once by actually creating a namespace.
    static let unavailableReason: String? = {
        guard getuid() == 0 else { return "needs root to create network namespaces" }
        for tool in ["ip", "ethtool"] {
            guard (try? runExternalToolBlocking("sh", ["-c", "command -v \(tool)"]))?.status == 0 else {
                return "needs \(tool) (scripts/dev test installs iproute2 and ethtool)"
            }
        }
        let probe = "edgw-probe-\(getpid())"
        guard let created = try? addNamespace(probe), created.status == 0 else {
            return "`ip netns add` fails here (no CAP_SYS_ADMIN?)"
        }
        _ = try? runExternalToolBlocking("ip", ["netns", "del", probe])
        return nil
    }()

    /// `ip netns add`, tried again after a moment when it fails: another test adding a namespace at the same
    /// time can make the first one's mount of /run/netns fail.
    static func addNamespace(_ name: String) throws -> ExternalToolOutcome {
        var outcome = try runExternalToolBlocking("ip", ["netns", "add", name])
        for _ in 0..<5 where outcome.status != 0 {
            usleep(200_000)
            _ = try? runExternalToolBlocking("ip", ["netns", "del", name])
            outcome = try runExternalToolBlocking("ip", ["netns", "add", name])
        }
        return outcome
    }

    static var emulatorBinary: URL {
        EdgeGatewayExecutable.url.deletingLastPathComponent().appendingPathComponent("LinkEmulator")
    }

    let root: URL
    let a: Node
    let b: Node
    let link: String
    let impairment: Impairment
    private var emulator: SpawnedProcess?
    private var cutFile: URL { root.appendingPathComponent("cut") }
    var emulatorLogPath: String { root.appendingPathComponent("link-emulator.log").path }

    init(impairment: Impairment) throws {
        let tag = String(UInt32.random(in: 0...0xFFFF), radix: 16)
        root = try reliabilityDirectory("bad-network-\(tag)")
        a = Node(namespace: "edgw-rel-\(tag)-a", interface: "edgwa\(tag)", address: "10.214.0.1")
        b = Node(namespace: "edgw-rel-\(tag)-b", interface: "edgwb\(tag)", address: "10.214.0.2")
        link = "edgw-rel-\(tag)-r"
        self.impairment = impairment
        do {
            try createNetwork()
            try startEmulator()
        } catch {
            tearDown()
            throw error
        }
    }

    /// Stops the emulator and deletes the namespaces (with their interfaces) and the files.
    func tearDown() {
        if let emulator {
            NetworkProcesses.stop(emulator)
        }
        emulator = nil
        for namespace in [a.namespace, b.namespace, link] {
            _ = try? runExternalToolBlocking("ip", ["netns", "del", namespace])
        }
        try? FileManager.default.removeItem(at: root)
    }

    /// Drops every frame from now on, both ways: no FIN or RST reaches either side, as when a cable is pulled.
    func cut() throws {
        guard FileManager.default.createFile(atPath: cutFile.path, contents: nil) else {
            throw ReliabilityFailure("cannot create \(cutFile.path)")
        }
    }

    func restore() throws {
        try FileManager.default.removeItem(at: cutFile)
    }

    private func createNetwork() throws {
        for namespace in [a.namespace, b.namespace, link] {
            try check(Self.addNamespace(namespace), "ip netns add \(namespace)")
        }
        // Created inside the namespaces: the pairs never exist on the host.
        for (node, end) in [(a, "ra"), (b, "rb")] {
            try check(
                runExternalToolBlocking(
                    "ip",
                    [
                        "link", "add", node.interface, "netns", node.namespace, "type", "veth", "peer", "name", end,
                        "netns", link,
                    ]),
                "ip link add veth for \(node.namespace)")
            try check(runExternalToolBlocking("ip", ["-n", node.namespace, "link", "set", "lo", "up"]), "lo up")
            try check(
                runExternalToolBlocking(
                    "ip", ["-n", node.namespace, "addr", "add", "\(node.address)/24", "dev", node.interface]),
                "addr add")
            // The emulator passes frames on as a packet socket reads them, before the kernel would fill in
            // offloaded checksums or split offloaded segments.
            try check(
                runExternalToolBlocking(
                    "ip",
                    [
                        "netns", "exec", node.namespace, "ethtool", "-K", node.interface, "tx", "off", "tso", "off",
                        "gso", "off",
                    ]),
                "ethtool -K \(node.interface)")
            try check(
                runExternalToolBlocking("ip", ["-n", node.namespace, "link", "set", node.interface, "up"]), "veth up")
            // Frames for the other side's address are not for R's own interfaces: they must not be filtered out.
            try check(
                runExternalToolBlocking("ip", ["-n", link, "link", "set", end, "promisc", "on", "up"]), "\(end) up")
        }
    }

    private func startEmulator() throws {
        _ = FileManager.default.createFile(atPath: emulatorLogPath, contents: nil)
        let log = try FileHandle(forWritingTo: URL(fileURLWithPath: emulatorLogPath))
        let process = SpawnedProcess()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "ip", "netns", "exec", link, Self.emulatorBinary.path, "ra", "rb", "\(impairment.delayMilliseconds)",
            "\(impairment.reorderPercent)", "\(impairment.lossPercent)", cutFile.path,
        ]
        process.standardOutput = log
        process.standardError = log
        process.standardInput = FileHandle.nullDevice
        try process.run()
        try log.close()
        emulator = process
        for _ in 0..<100 {
            let text = (try? String(contentsOfFile: emulatorLogPath, encoding: .utf8)) ?? ""
            if text.contains("link-emulator: ra <-> rb") { return }
            guard process.isRunning else { break }
            usleep(50_000)
        }
        throw ReliabilityFailure(
            "link emulator did not start: " + ((try? String(contentsOfFile: emulatorLogPath, encoding: .utf8)) ?? ""))
    }

    private func check(_ outcome: ExternalToolOutcome, _ step: String) throws {
        guard outcome.status == 0 else {
            throw ReliabilityFailure("\(step) failed: \(outcome.error)\(outcome.output)")
        }
    }
}

enum NetworkProcesses {
    /// SIGTERM, and SIGKILL for a process that has not exited a few seconds later.
    static func stop(_ process: SpawnedProcess) {
        guard process.isRunning else { return }
        process.terminate()
        for _ in 0..<50 where process.isRunning {
            usleep(100_000)
        }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
        }
        process.waitUntilExit()
    }
}
