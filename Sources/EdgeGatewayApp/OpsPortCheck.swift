import EdgeConfig
import Foundation
import NIOCore
import NIOPosix

/// Why the ops endpoint cannot listen, with the fix.
public struct OpsPortUnavailableError: Error, Sendable, CustomStringConvertible {
    public var address: String
    public var port: Int
    /// False when the port is privileged rather than taken.
    public var inUse: Bool

    public init(address: String, port: Int, inUse: Bool) {
        self.address = address
        self.port = port
        self.inUse = inUse
    }

    public var description: String {
        inUse
            ? "ops port \(port) on \(address) is already in use (is another gateway running on this host?): "
                + "stop it, or set another port with [ops] port or EDGE_GATEWAY_OPS_PORT"
            : "no permission to bind ops port \(port) on \(address): use a port above 1023 ([ops] port or "
                + "EDGE_GATEWAY_OPS_PORT), or grant the gateway CAP_NET_BIND_SERVICE"
    }
}

/// The ops endpoint is how the node reports everything else, so a node that cannot bind it has no way to show
/// its health: this is checked first, before the data directory is opened or anything is created in it, and
/// start-up is refused with one line. (The port can still be taken between this check and the server binding it;
/// `serve` reports that the same way.)
enum OpsPortCheck {
    static func requireAvailable(_ ops: OpsSettings) async throws {
        guard ops.port != 0 else { return }
        do {
            let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .bind(host: ops.address, port: ops.port)
                .get()
            try await channel.close()
        } catch let error as IOError where error.errnoCode == EADDRINUSE || error.errnoCode == EACCES {
            throw OpsPortUnavailableError(address: ops.address, port: ops.port, inUse: error.errnoCode == EADDRINUSE)
        }
    }
}
