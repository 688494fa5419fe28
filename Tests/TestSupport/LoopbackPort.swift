import Foundation

/// A port that is free now and that the kernel will not hand out on its own: good enough for a child process that
/// binds it a moment later. A port the kernel picked (bind to port 0) would be one of its ephemeral ports, which it
/// also gives to outgoing connections of tests running alongside; one such connection on that port made a child
/// gateway fail with "already in use". Ports below the ephemeral range are only ever given out here, in turn.
package func freeLoopbackPort() throws -> Int {
    guard let range = portsBelowTheEphemeralRange else {
        let (descriptor, port) = try boundLoopbackSocket()
        close(descriptor)
        return port
    }
    for _ in 0..<range.count {
        let candidate = unassignedPortLock.withLock {
            let port = nextUnassignedPort
            nextUnassignedPort = port + 1 < range.upperBound ? port + 1 : range.lowerBound
            return port
        }
        // Without SO_REUSEADDR, so that a port with connections still in TIME_WAIT is passed over as well.
        if let (descriptor, port) = try? boundLoopbackSocket(port: candidate, reuseAddress: false) {
            close(descriptor)
            return port
        }
    }
    throw POSIXError(.EADDRNOTAVAIL)
}

/// From 10,000 up to the first port of `net.ipv4.ip_local_port_range`; nil when that range starts too low to
/// leave room below it.
private let portsBelowTheEphemeralRange: Range<Int>? = {
    let setting = (try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8)) ?? ""
    let firstEphemeral = setting.split(whereSeparator: \.isWhitespace).first.flatMap { Int($0) } ?? 32768
    return firstEphemeral > 11_000 ? 10_000..<firstEphemeral : nil
}()

/// Starts at a random place, so that two test processes running at once rarely walk the same ports.
nonisolated(unsafe) private var nextUnassignedPort = portsBelowTheEphemeralRange.map { Int.random(in: $0) } ?? 0
private let unassignedPortLock = NSLock()

/// Runs `body` with a loopback port that refuses every connection until `body` returns. The port stays
/// bound without listening, so a listener of a test running alongside cannot be given it, as it could a
/// port that was merely free a moment ago.
package func withClosedLoopbackPort<Result>(_ body: (Int) async throws -> Result) async throws -> Result {
    let (descriptor, port) = try boundLoopbackSocket()
    defer { close(descriptor) }
    return try await body(port)
}

/// A loopback port that refuses every connection until `release()`, for a test that starts its own listener on
/// it later: released just before that start, it cannot be given to a listener of a test running alongside in
/// the meantime, as a port that was merely free a moment ago can.
package final class ReservedLoopbackPort: @unchecked Sendable {
    package let port: Int
    private var descriptor: Int32

    /// Reserves a port the system picks, or `port` again (one a listener of the test has just released).
    package init(port: Int = 0) throws {
        (descriptor, self.port) = try boundLoopbackSocket(port: port)
    }

    package func release() {
        guard descriptor >= 0 else { return }
        close(descriptor)
        descriptor = -1
    }

    deinit { release() }
}

private func boundLoopbackSocket(port: Int = 0, reuseAddress: Bool = true) throws -> (descriptor: Int32, port: Int) {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard descriptor >= 0 else { throw POSIXError(.EMFILE) }
    if port != 0 && reuseAddress {
        // As a listener binds: a port whose last connections are in TIME_WAIT can be taken again. Only then:
        // with the option on both, a second socket could bind a port held by a first that does not listen.
        var reuse: Int32 = 1
        setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &reuse, socklen_t(MemoryLayout<Int32>.size))
    }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = UInt16(port).bigEndian
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
            bind(descriptor, pointer, length) == 0 && getsockname(descriptor, pointer, &length) == 0
        }
    }
    guard bound else {
        close(descriptor)
        throw POSIXError(.EADDRNOTAVAIL)
    }
    return (descriptor, Int(UInt16(bigEndian: address.sin_port)))
}
