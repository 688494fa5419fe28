import EdgeConfig
import Foundation
import Logging

/// The process's limit on open files, which caps the connections it can hold: every replication connection is a
/// descriptor, beside the databases' files (main, WAL, shared memory), blobs being read, and the ops port's clients.
/// Container runtimes and login shells commonly start processes with a soft limit of 1,024 under a hard limit
/// hundreds of times higher, which would refuse connections long before `max_connections`.
enum OpenFileLimit {
    /// Descriptors kept for everything but replication connections: three files per database, upstream
    /// connections, blobs in flight, ops clients, and the runtime's own.
    static let reserve = 256

    /// What the configured listeners can need at once.
    static func needed(by configuration: GatewayConfiguration) -> Int {
        configuration.listeners.reduce(reserve) { $0 + $1.maxConnections }
    }

    /// Raises the soft limit to the hard limit, as the Go runtime does for every Go server (Sync Gateway among
    /// them); only the hard limit needs privileges to raise. Says what to change when even that is too low.
    static func raise(toServe configuration: GatewayConfiguration, logger: Logger) {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return }
        let before = limit.rlim_cur
        if limit.rlim_cur < limit.rlim_max {
            limit.rlim_cur = limit.rlim_max
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) != 0 {
                limit.rlim_cur = before
            }
        }
        let needed = needed(by: configuration)
        guard limit.rlim_cur < rlim_t(needed) else {
            if limit.rlim_cur != before {
                logger.debug("open-file limit raised", metadata: ["from": "\(before)", "to": "\(limit.rlim_cur)"])
            }
            return
        }
        logger.warning(
            """
            the open-file limit is \(limit.rlim_cur) (hard limit \(limit.rlim_max)), below the \(needed) that the \
            listeners' max_connections need: connections beyond it will be refused. Raise the hard limit \
            (compose.yaml: `ulimits: nofile: 65536`; systemd: LimitNOFILE=65536) or lower max_connections
            """)
    }
}
