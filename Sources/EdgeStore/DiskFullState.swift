import Foundation
import Synchronization

/// Whether the last write to a database's files was refused for want of space. Set by a write that failed with
/// `StoreError.diskFull`, cleared by the next write that succeeds: health reports the store degraded meanwhile,
/// and the refused clients' retries clear it once space has been freed.
final class DiskFullState: Sendable {
    private let full = Mutex(false)

    var isFull: Bool { full.withLock { $0 } }

    func recordSuccess() {
        full.withLock { $0 = false }
    }

    /// Passes `error` through, noting whether it was a full disk.
    func record(_ error: StoreError) -> StoreError {
        if case .diskFull = error { full.withLock { $0 = true } }
        return error
    }
}

extension StoreError {
    /// An I/O failure on `path`, classified as `diskFull` when the file system had no space left.
    static func io(path: String, error: any Error) -> StoreError {
        let error = error as NSError
        let outOfSpace =
            (error.domain == NSPOSIXErrorDomain && error.code == Int(ENOSPC))
            || (error.domain == NSCocoaErrorDomain && error.code == CocoaError.fileWriteOutOfSpace.rawValue)
            || (error.userInfo[NSUnderlyingErrorKey] as? NSError).map {
                $0.domain == NSPOSIXErrorDomain && $0.code == Int(ENOSPC)
            } == true
        return outOfSpace ? .diskFull(path: path) : .io(path: path, reason: error.localizedDescription)
    }
}
