import Foundation
import Synchronization

private let spawning = Mutex(())

extension Process {
    /// Starts the process while no other test in this bundle is starting one. The test bundle runs suites in
    /// parallel, and swift-corelibs-foundation's `Process.run()` crashed in a `memcpy` while several child
    /// processes were being started at once (the reliability suite's gateways beside the command-line tests).
    public func runSerialized() throws {
        try spawning.withLock { _ in try run() }
    }
}
