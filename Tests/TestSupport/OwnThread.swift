import Foundation

/// Runs blocking work (waiting for a child process, reading its pipes to the end, a socket read with a timeout) on a
/// thread of its own and awaits the result.
///
/// The concurrency pool has one thread per core, two on the CI machine: work that blocks two of them stalls every
/// task of the test process, the in-process listeners of suites running beside the caller included. That is how the
/// fuzzers, which run beside the command-line and DNS-SD suites, once saw a listener go silent for 30 s.
package func onOwnThread<Value: Sendable>(_ work: @escaping @Sendable () throws -> Value) async throws -> Value {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread { continuation.resume(with: Result { try work() }) }
    }
}
