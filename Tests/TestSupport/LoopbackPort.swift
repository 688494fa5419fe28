import Foundation

/// A port that was free a moment ago: good enough for a child process that binds it right away.
public func freeLoopbackPort() throws -> Int {
    let (descriptor, port) = try boundLoopbackSocket()
    close(descriptor)
    return port
}

/// Runs `body` with a loopback port that refuses every connection until `body` returns. The port stays
/// bound without listening, so a listener of a test running alongside cannot be given it, as it could a
/// port that was merely free a moment ago.
public func withClosedLoopbackPort<Result>(_ body: (Int) async throws -> Result) async throws -> Result {
    let (descriptor, port) = try boundLoopbackSocket()
    defer { close(descriptor) }
    return try await body(port)
}

/// A loopback port that refuses every connection until `release()`, for a test that starts its own listener on
/// it later: released just before that start, it cannot be given to a listener of a test running alongside in
/// the meantime, as a port that was merely free a moment ago can.
public final class ReservedLoopbackPort: @unchecked Sendable {
    public let port: Int
    private var descriptor: Int32

    /// Reserves a port the system picks, or `port` again (one a listener of the test has just released).
    public init(port: Int = 0) throws {
        (descriptor, self.port) = try boundLoopbackSocket(port: port)
    }

    public func release() {
        guard descriptor >= 0 else { return }
        close(descriptor)
        descriptor = -1
    }

    deinit { release() }
}

private func boundLoopbackSocket(port: Int = 0) throws -> (descriptor: Int32, port: Int) {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard descriptor >= 0 else { throw POSIXError(.EMFILE) }
    if port != 0 {
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
