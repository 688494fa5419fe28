import Logging
import ServiceLifecycle

/// Runs `service` while `body` runs, then shuts it down gracefully, whether `body` returns or throws.
///
/// Not by cancellation: a cancelled Hummingbird server drops a connection it has just accepted and not yet handed
/// over, and NIO traps on that connection's unfinished writer (swift-nio#3481).
package func whileRunning<Value: Sendable>(
    _ service: some Service, logger: Logger, _ body: () async throws -> Value
) async throws -> Value {
    let services = ServiceGroup(services: [service], gracefulShutdownSignals: [], logger: logger)
    return try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { try await services.run() }
        let value: Value
        do {
            value = try await body()
        } catch {
            await services.triggerGracefulShutdown()
            throw error
        }
        await services.triggerGracefulShutdown()
        return value
    }
}
