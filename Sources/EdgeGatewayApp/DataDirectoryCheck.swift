import Foundation

/// Why the gateway cannot use its data directory, with the command that fixes it.
package struct DataDirectoryError: Error, Sendable, CustomStringConvertible {
    package var path: String
    package var description: String
}

/// Checked before anything is opened or created in the data directory, so that a volume the gateway cannot
/// write (typically created by root while the container runs as uid 1000) is reported with one line that names
/// it and says how to fix it, and nothing in it is touched. The store is then down until a restart: the node
/// keeps serving its ops endpoint to say so.
enum DataDirectoryCheck {
    /// The data directory is checked and opened once, at start.
    static let restartAdvice = "then restart the gateway (`docker compose restart gateway`)"

    static func requireWritable(_ path: String) throws(DataDirectoryError) {
        let uid = geteuid()
        var isDirectory: ObjCBool = false
        if !FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) {
            do {
                try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
                return
            } catch {
                let parent = (path as NSString).deletingLastPathComponent
                throw DataDirectoryError(
                    path: path,
                    description: "data directory \(path) does not exist and cannot be created by uid \(uid) "
                        + "(\((error as NSError).localizedDescription)): create it owned by uid \(uid) "
                        + "(`mkdir -p \(path) && chown \(uid) \(path)`), or set data_dir / EDGE_GATEWAY_DATA_DIR "
                        + "to a directory under a writable parent (\(parent) is not); \(restartAdvice)")
            }
        }
        guard isDirectory.boolValue else {
            throw DataDirectoryError(
                path: path,
                description: "data directory \(path) is a file, not a directory: move it away, or set data_dir / "
                    + "EDGE_GATEWAY_DATA_DIR to a directory; \(restartAdvice)")
        }
        // The databases are written in place, so they must be as writable as the directory; a volume once used
        // by another uid (a root `docker compose run`, a copy from another host) is caught here, not by SQLite.
        let databases = (path as NSString).appendingPathComponent("databases")
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: databases))?.sorted() ?? []
        for candidate in [path, databases] + entries.map({ (databases as NSString).appendingPathComponent($0) }) {
            var info = stat()
            guard lstat(candidate, &info) == 0 else { continue }
            let isDirectory = (info.st_mode & S_IFMT) == S_IFDIR
            guard access(candidate, R_OK | W_OK | (isDirectory ? X_OK : 0)) != 0 else { continue }
            // Owner and mode do not matter there: no chown helps, only mounting it writable.
            if errno == EROFS {
                throw DataDirectoryError(
                    path: path,
                    description: "data directory \(path) is on a read-only file system; nothing was changed in it. "
                        + "Mount the volume read-write (no `:ro` on it in compose.yaml), \(restartAdvice)")
            }
            let what = candidate == path ? "data directory \(path) is" : "\(candidate) in the data directory is"
            throw DataDirectoryError(
                path: path,
                description: "\(what) not writable by the gateway (uid \(uid); it has uid \(info.st_uid), mode "
                    + "\(String(info.st_mode & 0o7777, radix: 8))); nothing was changed in it. Fix the owner: "
                    + "`chown -R \(uid) \(path)` on the host, or with compose "
                    + "`docker compose run --rm --user root --entrypoint chown gateway -R \(uid) \(path)`; "
                    + restartAdvice)
        }
    }
}
