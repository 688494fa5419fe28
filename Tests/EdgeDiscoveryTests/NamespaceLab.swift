import EdgeGatewayTestSupport
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Two network namespaces joined by a veth pair (A: 10.213.0.1/24, B: 10.213.0.2/24), each with its own D-Bus
/// system bus and avahi-daemon that only use that veth. Multicast DNS sent in the lab never reaches the host's
/// interfaces, and nothing here touches the host's own bus or daemon.
///
/// Each avahi-daemon runs in a private mount namespace with a tmpfs over /run (`ip netns exec` already gives
/// the command its own mount namespace), so that the two daemons do not fight over /run/avahi-daemon/pid.
///
/// Setting up, running commands and restarting a daemon block for seconds, so the async entry points do that on a
/// thread of their own (`onOwnThread`). One test owns a lab and uses it from one task at a time.
final class NamespaceLab: @unchecked Sendable {
    struct Node {
        let namespace: String
        let interface: String
        let address: String
        let busAddress: String
        let directory: URL
        fileprivate(set) var bus: SpawnedProcess?
        fileprivate(set) var daemon: SpawnedProcess?
    }

    /// Why the lab cannot run here, or nil when it can; decided once by actually creating a namespace.
    static let unavailableReason: String? = {
        guard getuid() == 0 else { return "needs root to create network namespaces" }
        for tool in ["ip", "dbus-daemon", "avahi-daemon", "avahi-browse", "mount"] {
            guard (try? runExternalToolBlocking("sh", ["-c", "command -v \(tool)"]))?.status == 0 else {
                return "needs \(tool) (scripts/dev test installs avahi-daemon avahi-utils dbus iproute2)"
            }
        }
        let probe = "edgw-probe-\(getpid())"
        guard let created = try? runExternalToolBlocking("ip", ["netns", "add", probe]), created.status == 0 else {
            return "`ip netns add` fails here (no CAP_SYS_ADMIN?)"
        }
        _ = try? runExternalToolBlocking("ip", ["netns", "del", probe])
        return nil
    }()

    let root: URL
    private(set) var a: Node
    private(set) var b: Node

    /// A lab set up on a thread of its own.
    static func make() async throws -> NamespaceLab {
        try await onOwnThread { try NamespaceLab() }
    }

    private init() throws {
        let tag = String(UInt32.random(in: 0...0xFFFF), radix: 16)
        root = FileManager.default.temporaryDirectory.appendingPathComponent(
            "edgw-lab-\(tag)-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        a = Node(
            namespace: "edgw-\(tag)-a", interface: "edgwa\(tag)", address: "10.213.0.1",
            busAddress: "unix:path=\(root.path)/a/bus", directory: root.appendingPathComponent("a"))
        b = Node(
            namespace: "edgw-\(tag)-b", interface: "edgwb\(tag)", address: "10.213.0.2",
            busAddress: "unix:path=\(root.path)/b/bus", directory: root.appendingPathComponent("b"))
        do {
            try createNetwork()
            a = try startServices(a, hostName: "lab-a")
            b = try startServices(b, hostName: "lab-b")
            try waitUntilDaemonReady(a)
            try waitUntilDaemonReady(b)
        } catch {
            tearDown()
            throw error
        }
    }

    /// Kills the daemons and deletes the namespaces (which deletes the veth pair) and the files.
    func tearDown() {
        for node in [a, b] {
            node.daemon.map(Self.stop)
            node.bus.map(Self.stop)
            _ = try? runExternalToolBlocking("ip", ["netns", "del", node.namespace])
        }
        try? FileManager.default.removeItem(at: root)
    }

    /// Runs a command to completion inside `node`'s namespace, with its bus as the system bus.
    func run(in node: Node, _ arguments: [String]) async throws -> ExternalToolOutcome {
        try await runExternalTool(
            "ip", ["netns", "exec", node.namespace, "env", "DBUS_SYSTEM_BUS_ADDRESS=\(node.busAddress)"] + arguments)
    }

    /// Starts a long-running command inside `node`'s namespace, its output going to `log`.
    func start(in node: Node, _ arguments: [String], log: URL) throws -> SpawnedProcess {
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let output = try FileHandle(forWritingTo: log)
        let process = SpawnedProcess()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments =
            ["ip", "netns", "exec", node.namespace, "env", "DBUS_SYSTEM_BUS_ADDRESS=\(node.busAddress)"] + arguments
        process.environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("EDGE_GATEWAY_") }
        process.standardOutput = output
        process.standardError = output
        try process.run()
        try output.close()
        return process
    }

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

    /// Stops A's avahi-daemon and starts a new one, as a package upgrade or a crash would.
    func restartDaemonOfA() async throws {
        try await onOwnThread { try self.restartDaemonOfABlocking() }
    }

    private func restartDaemonOfABlocking() throws {
        a.daemon.map(Self.stop)
        a.daemon = try startDaemon(a, hostName: "lab-a", attempt: 2)
        try waitUntilDaemonReady(a, attempt: 2)
    }

    private func createNetwork() throws {
        for node in [a, b] {
            try check(
                runExternalToolBlocking("ip", ["netns", "add", node.namespace]), "ip netns add \(node.namespace)")
        }
        // Created directly inside the namespaces: the pair never exists on the host.
        try check(
            runExternalToolBlocking(
                "ip",
                [
                    "link", "add", a.interface, "netns", a.namespace, "type", "veth", "peer", "name", b.interface,
                    "netns", b.namespace,
                ]),
            "ip link add veth")
        for node in [a, b] {
            try check(runExternalToolBlocking("ip", ["-n", node.namespace, "link", "set", "lo", "up"]), "lo up")
            try check(
                runExternalToolBlocking(
                    "ip", ["-n", node.namespace, "addr", "add", "\(node.address)/24", "dev", node.interface]),
                "addr add")
            try check(
                runExternalToolBlocking("ip", ["-n", node.namespace, "link", "set", node.interface, "up"]), "veth up")
        }
    }

    private func startServices(_ node: Node, hostName: String) throws -> Node {
        var node = node
        try FileManager.default.createDirectory(at: node.directory, withIntermediateDirectories: true)
        let busConfig = node.directory.appendingPathComponent("bus.conf")
        // A bus for this lab only: anyone may own names (avahi-daemon takes org.freedesktop.Avahi) and talk.
        try """
        <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
        <busconfig>
          <type>system</type>
          <listen>\(node.busAddress)</listen>
          <auth>EXTERNAL</auth>
          <policy context="default">
            <allow user="*"/>
            <allow own="*"/>
            <allow send_destination="*"/>
            <allow receive_sender="*"/>
          </policy>
        </busconfig>
        """.write(to: busConfig, atomically: true, encoding: .utf8)
        // In the foreground (not --fork), so that the lab holds the process and stops it with certainty; a
        // forked daemon would also keep the output pipe of whoever started it open.
        let bus = try start(
            in: node, ["dbus-daemon", "--config-file=\(busConfig.path)", "--nofork", "--nopidfile"],
            log: node.directory.appendingPathComponent("dbus-daemon.log"))
        node.bus = bus
        let socket = node.directory.appendingPathComponent("bus").path
        for _ in 0..<100 where !FileManager.default.fileExists(atPath: socket) && bus.isRunning {
            usleep(100_000)
        }
        do {
            guard FileManager.default.fileExists(atPath: socket) else {
                let log =
                    (try? String(contentsOf: node.directory.appendingPathComponent("dbus-daemon.log"), encoding: .utf8))
                    ?? ""
                throw LabError(step: "dbus-daemon in \(node.namespace)", detail: "no bus socket: \(log)")
            }
            node.daemon = try startDaemon(node, hostName: hostName, attempt: 1)
        } catch {
            // The node is not stored yet, so tearDown would not see this bus.
            Self.stop(bus)
            throw error
        }
        return node
    }

    private func startDaemon(_ node: Node, hostName: String, attempt: Int) throws -> SpawnedProcess {
        let configuration = node.directory.appendingPathComponent("avahi-daemon.conf")
        try """
        [server]
        host-name=\(hostName)
        use-ipv4=yes
        use-ipv6=no
        allow-interfaces=\(node.interface)
        enable-dbus=yes
        ratelimit-interval-usec=1000000
        ratelimit-burst=1000

        [wide-area]
        enable-wide-area=no

        [publish]
        publish-hinfo=no
        publish-workstation=no
        publish-aaaa-on-ipv4=no
        """.write(to: configuration, atomically: true, encoding: .utf8)
        let log = node.directory.appendingPathComponent("avahi-daemon-\(attempt).log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let output = try FileHandle(forWritingTo: log)
        defer { try? output.close() }
        let daemon = SpawnedProcess()
        daemon.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        // `exec` keeps the daemon the process we hold, so stop() reaches it.
        daemon.arguments = [
            "ip", "netns", "exec", node.namespace, "env", "DBUS_SYSTEM_BUS_ADDRESS=\(node.busAddress)",
            "sh", "-c",
            "mount -t tmpfs edgw-lab /run && exec avahi-daemon --no-drop-root --no-chroot --no-rlimits -f \(configuration.path)",
        ]
        daemon.standardInput = FileHandle.nullDevice
        daemon.standardOutput = output
        daemon.standardError = output
        try daemon.run()
        return daemon
    }

    private func waitUntilDaemonReady(_ node: Node, attempt: Int = 1) throws {
        let log = node.directory.appendingPathComponent("avahi-daemon-\(attempt).log")
        for _ in 0..<100 {
            let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            if text.contains("Server startup complete") { return }
            if let daemon = node.daemon, !daemon.isRunning {
                throw LabError(step: "avahi-daemon in \(node.namespace)", detail: text)
            }
            usleep(100_000)
        }
        throw LabError(
            step: "avahi-daemon in \(node.namespace)",
            detail: "not ready after 10 s: " + ((try? String(contentsOf: log, encoding: .utf8)) ?? ""))
    }

    private func check(_ outcome: ExternalToolOutcome, _ step: String) throws {
        guard outcome.status == 0 else {
            throw LabError(step: step, detail: outcome.error + outcome.output)
        }
    }
}

struct LabError: Error, CustomStringConvertible {
    var step: String
    var detail: String
    var description: String { "\(step) failed: \(detail)" }
}
