// Times `GET /metrics` on an in-process gateway whose listener holds open replication connections.
//
//     cd Benchmarks && swift run -c release MetricsScrapeBenchmark [connections] [scrapes]
//
// Each connection is a completed WebSocket upgrade to /inventory/_blipsync with the replication subprotocol,
// held open (idle) while the ops port is scraped; a scrape walks every listener's connection list, so its cost
// grows with the open connections. Prints the scrape time percentiles and the exposition's size.

import EdgeConfig
import EdgeGatewayApp
import Foundation
import Logging
import ServiceLifecycle

let connectionCount = CommandLine.arguments.count > 1 ? Int(CommandLine.arguments[1]) ?? 1000 : 1000
let scrapeCount = CommandLine.arguments.count > 2 ? Int(CommandLine.arguments[2]) ?? 200 : 200

/// Raises the soft descriptor limit to the hard one: the connections take two descriptors each here.
func raiseDescriptorLimit() {
    var limit = rlimit()
    getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    limit.rlim_cur = limit.rlim_max
    setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
}

func freePort() -> Int {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(descriptor) }
    var address = loopback(port: 0)
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            _ = bind(descriptor, $0, length)
            _ = getsockname(descriptor, $0, &length)
        }
    }
    return Int(UInt16(bigEndian: address.sin_port))
}

func loopback(port: Int) -> sockaddr_in {
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = UInt16(port).bigEndian
    return address
}

/// A connected blocking socket, or nil while nothing listens yet.
func connectLoopback(port: Int) -> Int32? {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var address = loopback(port: port)
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
        }
    }
    if connected { return descriptor }
    close(descriptor)
    return nil
}

/// Sends `request` and reads until the end of the head (and, with `Content-Length`, the body).
func exchange(_ descriptor: Int32, _ request: String) -> (head: String, body: [UInt8]) {
    _ = request.withCString { send(descriptor, $0, strlen($0), 0) }
    var received: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65536)
    var expectedLength: Int?
    var headEnd: Int?
    while true {
        let count = recv(descriptor, &buffer, buffer.count, 0)
        guard count > 0 else { break }
        received.append(contentsOf: buffer[0..<count])
        if headEnd == nil, let range = received.firstRange(of: Array("\r\n\r\n".utf8)) {
            headEnd = range.upperBound
            let head = String(decoding: received[0..<range.lowerBound], as: UTF8.self).lowercased()
            expectedLength = head.split(separator: "\r\n").first { $0.hasPrefix("content-length:") }
                .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
        }
        if let headEnd, let expectedLength, received.count - headEnd >= expectedLength { break }
    }
    let end = headEnd ?? received.count
    return (String(decoding: received[0..<end], as: UTF8.self), Array(received[end...]))
}

raiseDescriptorLimit()
let directory = FileManager.default.temporaryDirectory.appendingPathComponent("metrics-bench-\(UUID().uuidString)")
defer { try? FileManager.default.removeItem(at: directory) }
let opsPort = freePort()
let listenerPort = freePort()
let configuration = try ConfigurationLoader.parse(
    toml: """
        [node]
        name = "bench"
        data_dir = "\(directory.path)"
        log_level = "warning"

        [ops]
        address = "127.0.0.1"
        port = \(opsPort)

        [[database]]
        name = "inventory"

        [[listener]]
        name = "lan"
        interface = "127.0.0.1"
        port = \(listenerPort)
        tls = "off"
        auth = "none"
        databases = ["inventory"]
        max_connections = \(connectionCount + 10)
        idle_timeout = "off"
        """,
    source: "benchmark", environment: [:], overrides: ConfigurationOverrides())
var logger = Logger(label: "bench")
logger.logLevel = .warning
let application = try await buildApplication(configuration: configuration, logger: logger)
let group = ServiceGroup(services: [application], logger: logger)
let running = Task { try await group.run() }

var ops: Int32?
while ops == nil {
    try await Task.sleep(for: .milliseconds(50))
    ops = connectLoopback(port: opsPort)
}
let upgrade =
    "GET /inventory/_blipsync HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"
    + "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
    + "Sec-WebSocket-Protocol: BLIP_3+CBMobile_3\r\n\r\n"
var connections: [Int32] = []
while connections.count < connectionCount {
    guard let descriptor = connectLoopback(port: listenerPort) else {
        try await Task.sleep(for: .milliseconds(50))
        continue
    }
    let (head, _) = exchange(descriptor, upgrade)
    guard head.hasPrefix("HTTP/1.1 101") else {
        print("upgrade \(connections.count + 1) refused: \(head.prefix(80))")
        exit(1)
    }
    connections.append(descriptor)
}

let scrape = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
var durations: [Double] = []
var size = 0
var text = ""
for index in 0..<(scrapeCount + 5) {
    let start = ContinuousClock.now
    let (head, body) = exchange(ops!, scrape)
    let elapsed = ContinuousClock.now - start
    guard head.hasPrefix("HTTP/1.1 200") else {
        print("scrape failed: \(head.prefix(80))")
        exit(1)
    }
    size = body.count
    text = String(decoding: body, as: UTF8.self)
    // The first scrapes create the series; steady state is what a Prometheus server sees.
    if index >= 5 {
        durations.append(Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1000)
    }
}
durations.sort()
func percentile(_ fraction: Double, of sorted: [Double]) -> Double {
    sorted[min(sorted.count - 1, Int(Double(sorted.count) * fraction))]
}
let open = text.split(separator: "\n").first { $0.hasPrefix("edgegateway_listener_connections_open") } ?? "?"
print("connections open: \(connections.count) (\(open))")
print(
    String(
        format: "scrapes: %d, p50 %.2f ms, p90 %.2f ms, p99 %.2f ms, max %.2f ms, exposition %d bytes",
        durations.count, percentile(0.5, of: durations), percentile(0.9, of: durations),
        percentile(0.99, of: durations), durations.last ?? 0, size))
connections.forEach { close($0) }
close(ops!)
await group.triggerGracefulShutdown()
_ = try? await running.value
