import EdgeConfig
import Foundation
import NIOCore
import NIOPosix

/// Why the ops endpoint cannot listen, with the fix.
package struct OpsPortUnavailableError: Error, Sendable, CustomStringConvertible {
    package enum Cause: Sendable {
        /// Another process listens there.
        case inUse
        /// A port below 1024 without the capability to bind it.
        case privileged
        /// The address is not one of this host's.
        case addressNotLocal
    }

    package var address: String
    package var port: Int
    package var cause: Cause

    package init(address: String, port: Int, cause: Cause) {
        self.address = address
        self.port = port
        self.cause = cause
    }

    package var description: String {
        switch cause {
        case .inUse:
            "ops port \(port) on \(address) is already in use (is another gateway running on this host?): "
                + "stop it, or set another port with [ops] port or EDGE_GATEWAY_OPS_PORT"
        case .privileged:
            "no permission to bind ops port \(port) on \(address): use a port above 1023 ([ops] port or "
                + "EDGE_GATEWAY_OPS_PORT), or grant the gateway CAP_NET_BIND_SERVICE"
        case .addressNotLocal:
            "ops address \(address) is not an address of this host: set [ops] address or EDGE_GATEWAY_OPS_ADDRESS "
                + "to one of its addresses, 127.0.0.1 or 0.0.0.0"
        }
    }
}

/// The ops endpoint is how the node reports everything else, so a node that cannot bind it has no way to show
/// its health: this is checked first, before the data directory is opened or anything is created in it, and
/// start-up is refused with one line. (The port can still be taken between this check and the server binding it;
/// `serve` reports that the same way.)
enum OpsPortCheck {
    static func requireAvailable(_ ops: OpsSettings) async throws {
        do {
            let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .bind(host: ops.address, port: ops.port)
                .get()
            try await channel.close()
        } catch let error as IOError {
            let cause: OpsPortUnavailableError.Cause? =
                switch error.errnoCode {
                case EADDRINUSE: .inUse
                case EACCES: .privileged
                case EADDRNOTAVAIL: .addressNotLocal
                default: nil
                }
            guard let cause else { throw error }
            throw OpsPortUnavailableError(address: ops.address, port: ops.port, cause: cause)
        }
    }
}
