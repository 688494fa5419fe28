import EdgeGatewayTestSupport
import Foundation
import GRDB
import Testing

@testable import EdgeStore

@Suite("A cancelled store call")
struct StoreCancellationTests {
    /// Callers tell a stop from a failure by `StoreError.cancelled`. A statement the store steps itself, which
    /// GRDB interrupted for the cancellation, came back as `.sqlite(code: 9, "interrupted")`, and a continuous
    /// replication being stopped reported that as its error.
    @Test("a read cancelled while its statement runs throws StoreError.cancelled")
    func cancelledWhileRunning() async throws {
        try await LocalDatabase.run { local in
            let database = local.database
            let started = AsyncStream<Void>.makeStream()
            let reading = Task {
                try await database.read { db in
                    started.continuation.yield()
                    // Seconds of work, so that the cancellation lands while the statement runs. Stepped directly, as
                    // the replication paths step theirs, not through GRDB's cursors, which report an interrupt as
                    // CancellationError themselves.
                    let statement = try db.makeStatement(
                        sql: """
                            WITH RECURSIVE counter(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM counter
                            WHERE n < 2000000000) SELECT count(*) FROM counter
                            """)
                    return try statement.directFirstRow([]) { $0.int64(0) }
                }
            }
            var iterator = started.stream.makeAsyncIterator()
            await iterator.next()
            try await Task.sleep(for: .milliseconds(100))
            reading.cancel()
            await #expect(throws: StoreError.cancelled) { _ = try await reading.value }
        }
    }
}
