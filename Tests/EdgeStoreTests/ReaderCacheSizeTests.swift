import EdgeGatewayTestSupport
import GRDB
import Testing

@testable import EdgeStore

@Suite("SQLite page caches")
struct ReaderCacheSizeTests {
    @Test("reader connections cache at most 1 MiB of pages; the writer keeps SQLite's default")
    func cacheSizes() async throws {
        try await LocalDatabase.run { local in
            let reader = try await local.database.read { db in try Int.fetchOne(db, sql: "PRAGMA cache_size") }
            let writer = try await local.database.write(wakesChangeFeeds: false) { db in
                try Int.fetchOne(db, sql: "PRAGMA cache_size")
            }
            #expect(reader == -DocumentDatabase.readerCacheKiB)
            #expect(writer == -2000)
        }
    }
}
