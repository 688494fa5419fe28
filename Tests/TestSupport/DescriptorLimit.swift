import Foundation

/// Raises this process's soft limit on open descriptors to its hard limit: hundreds of sync clients in one process
/// each hold a few SQLite files and a socket, more than the usual 1,024. Child processes inherit the raised limit.
package func raiseDescriptorLimit() {
    var limit = rlimit()
    guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < limit.rlim_max else {
        return
    }
    limit.rlim_cur = limit.rlim_max
    _ = setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
}
