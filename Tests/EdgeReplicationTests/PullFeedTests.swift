import BLIPCodec
import BLIPConnection
import EdgeGatewayTestSupport
import Foundation
import Logging
import ReplicationProtocol
import SyncJSON
import Synchronization
import Testing

@testable import EdgeReplication
@testable import EdgeStore

@Suite("A pull feed's tasks")
struct PullFeedTests {
    /// What the client of these tests received: the document IDs of `rev`s and how many caught-up markers.
    final class PullerRecord: Sendable {
        private let state = Mutex((revisions: [String](), caughtUp: 0))

        var revisions: [String] { state.withLock { $0.revisions } }
        var caughtUp: Int { state.withLock { $0.caughtUp } }

        /// Asks for every offered revision and records what arrives.
        func register(on client: BLIPConnection) async {
            await client.setHandler(for: "changes") { [self] request in
                let rows = try JSONValue(parsing: request.body).arrayValue?.count ?? 0
                if rows == 0 { state.withLock { $0.caughtUp += 1 } }
                let body = "[" + Array(repeating: "[]", count: rows).joined(separator: ",") + "]"
                return request.reply(properties: [:], body: Array(body.utf8))
            }
            await client.setHandler(for: "rev") { [self] request in
                state.withLock { $0.revisions.append(request.properties["id"] ?? "") }
                return request.reply()
            }
        }
    }

    @Test("a caught-up continuous feed holds no task until a commit wakes it; unsubChanges leaves nothing waiting")
    func caughtUpFeedHoldsNoTask() async throws {
        try await FuzzStore.with { store in
            let database = store.database
            var logger = Logger(label: "pull-feed")
            logger.logLevel = .critical
            let link = InMemoryBLIPLink()
            let gateway = try BLIPConnection(subprotocol: "BLIP_3+CBMobile_3", logger: logger)
            let client = try BLIPConnection(subprotocol: "BLIP_3+CBMobile_3", logger: logger)
            let session = PassiveReplicationSession(connection: gateway, database: database, logger: logger)
            await session.start()
            let record = PullerRecord()
            await record.register(on: client)
            let gatewayRun = Task {
                _ = try? await gateway.run(incoming: link.gatewayIncoming, writer: link.gatewayWriter)
            }
            let clientRun = Task { _ = try? await client.run(incoming: link.clientIncoming, writer: link.clientWriter) }

            try await database.save("before", body: Data(#"{"v":1}"#.utf8), parentRevID: nil)
            _ = try await client.sendRequest(.request(SubChangesRequest(continuous: true, batchSize: 10)))
            try await eventually("the backlog and the caught-up marker") {
                record.revisions == ["before"] && record.caughtUp == 1
            }
            try await eventually("the caught-up feed holds no task and waits for a commit") {
                await session.pullFeedTasks(collectionIndex: nil) == 0 && database.commits.waiting == 1
            }

            for index in 0..<3 {
                try await database.save("after-\(index)", body: Data(#"{"v":1}"#.utf8), parentRevID: nil)
                try await eventually("the live change \(index)") { record.revisions.count == 2 + index }
                try await eventually("caught up again after \(index)") {
                    await session.pullFeedTasks(collectionIndex: nil) == 0 && database.commits.waiting == 1
                }
            }

            _ = try await client.sendRequest(.request(UnsubChangesRequest()))
            #expect(await session.pullFeedTasks(collectionIndex: nil) == nil)
            #expect(database.commits.waiting == 0, "an ended feed still waits for the next commit")

            _ = try await client.sendRequest(.request(SubChangesRequest(since: .integer(100), continuous: true)))
            try await eventually("the second feed waits for a commit") { database.commits.waiting == 1 }
            await client.close()
            _ = await clientRun.value
            link.end()
            _ = await gatewayRun.value
            await session.stop()
            #expect(database.commits.waiting == 0, "a stopped session's feed still waits for the next commit")
            #expect(record.revisions.count == 4)
        }
    }
}
