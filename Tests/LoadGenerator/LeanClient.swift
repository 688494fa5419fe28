import BLIPCodec
import BLIPConnection
import Foundation
import Logging
import NIOPosix
import ReplicationProtocol
import SyncIdentifiers
import SyncJSON
import Synchronization
import UpstreamDialer

/// One device as the gateway sees it, without a store, so that a thousand cost far less than the gateway serving
/// them: a continuous push-and-pull connection in Couchbase Lite 3.x's legacy mode (`subChanges`, `changes`,
/// `rev`, `proposeChanges`) that asks for every revision offered but its own and those it has, answers each `rev`
/// at once from memory and records its arrival. Its own writes go up with `proposeChanges` and `rev`. After a lost
/// connection it reconnects as Couchbase Lite does and asks for the feed from the start, declining what it has.
final class LeanClient: Sendable {
    let name: String
    private let dialer: UpstreamDialer
    private let tracker: FanOutTracker
    private let state = Mutex(State())
    private let loop = Mutex<Task<Void, Never>?>(nil)

    private struct State {
        var connection: BLIPConnection?
        /// Whether the feed has caught up once: the fleet is measured from when every client has.
        var caughtUp = false
        /// Every document received or written here.
        var documents: Set<String> = []
    }

    /// All clients share one event loop: their sockets are the harness, not the system under test.
    static let eventLoop = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    static let quietLogger = Logger(label: "load-generator.client") { _ in SwiftLogNoOpLogHandler() }

    init(index: Int, url: String, heartbeat: Duration, tracker: FanOutTracker) throws {
        name = "c\(index)"
        self.tracker = tracker
        dialer = UpstreamDialer(
            target: try UpstreamTarget(url: url + "/_blipsync"),
            options: .init(
                subprotocols: [ReplicationSubprotocol.cbMobile3.rawValue],
                headers: [("User-Agent", "EdgeGateway-LoadGenerator (CouchbaseLite/3.2.4 legacy mode)")],
                heartbeat: heartbeat),
            eventLoopGroup: Self.eventLoop, logger: Self.quietLogger)
    }

    func start() {
        let task = Task {
            while !Task.isCancelled {
                try? await runConnection()
                state.withLock { $0.connection = nil }
                // Couchbase Lite's first retry waits about a second; jitter keeps a refused fleet from returning
                // in step.
                try? await Task.sleep(for: .milliseconds(Int.random(in: 500...1500)))
            }
        }
        loop.withLock { $0 = task }
    }

    func stop() async {
        let (task, connection) = (loop.withLock { $0 }, state.withLock { $0.connection })
        task?.cancel()
        await connection?.close(.normal)
        await task?.value
    }

    var isIdle: Bool { state.withLock { $0.connection != nil && $0.caughtUp } }

    var documentCount: Int { state.withLock { $0.documents.count } }

    private func runConnection() async throws {
        try await dialer.run { session in
            let connection = try BLIPConnection(subprotocol: session.subprotocol, logger: Self.quietLogger)
            await connection.setHandler(for: Profile.changes.rawValue) { try self.answerChanges($0) }
            await connection.setHandler(for: Profile.rev.rawValue) { self.receiveRevision($0) }
            await connection.setHandler(for: Profile.norev.rawValue) { $0.reply() }
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    try await connection.run(inbound: session.inbound, outbound: session.outbound)
                }
                group.addTask {
                    let (properties, body) = SubChangesRequest(
                        continuous: true, batchSize: 200, versioning: .revisionTrees
                    ).encode()
                    _ = try await connection.sendRequest(
                        BLIPMessage(kind: .request, properties: BLIPProperties(properties.pairs), body: body))
                    self.state.withLock { $0.connection = connection }
                    try await Task.sleep(for: .seconds(86_400 * 365))
                }
                // Whichever ends first (the socket closing, or cancellation) ends the connection.
                _ = try await group.next()
                group.cancelAll()
                await connection.close(.normal)
            }
        }
    }

    /// Asks for every offered revision but this client's own and those it has; a caught-up batch marks it idle.
    private func answerChanges(_ request: BLIPMessage) throws -> BLIPMessage {
        let changes = try ChangesRequest(properties: MessageProperties(request.properties.pairs), body: request.body)
        let ownPrefix = "\(name)-"
        let entries = state.withLock { state in
            if changes.isCaughtUp { state.caughtUp = true }
            return changes.rows.map { row -> ChangesReply.Entry in
                row.flags.offersRevision && !row.docID.hasPrefix(ownPrefix) && !state.documents.contains(row.docID)
                    ? .send(knownAncestors: []) : .skip
            }
        }
        let (properties, body) = ChangesReply(entries: entries, capabilities: ReceiverCapabilities(blobs: true))
            .encode()
        return request.reply(properties: BLIPProperties(properties.pairs), body: body)
    }

    private func receiveRevision(_ request: BLIPMessage) -> BLIPMessage {
        let now = ContinuousClock.now
        if let docID = request.properties["id"], state.withLock({ $0.documents.insert(docID).inserted }) {
            tracker.arrived(docID, at: now)
        }
        return request.reply()
    }

    /// Writes `count` documents of this client's own, the first after a random part of one interval.
    func writeAll(count: Int, interval: Duration) async throws {
        func pause(_ fraction: ClosedRange<Double>) async throws {
            guard interval > .zero else { return }
            try await Task.sleep(for: interval * Double.random(in: fraction))
        }
        try await pause(0...1)
        for index in 0..<count {
            if index > 0 { try await pause(0.5...1.5) }
            let docID = "\(name)-\(index)"
            state.withLock { _ = $0.documents.insert(docID) }
            tracker.wrote(docID)
            try await push(docID, body: Array(#"{"writer":"\#(name)","n":\#(index)}"#.utf8), sequence: index + 1)
        }
    }

    /// Proposes a new document and sends it once accepted, again over the next connection if this one is lost.
    private func push(_ docID: String, body: [UInt8], sequence: Int) async throws {
        let revisionID = RevisionID(generation: 1, digestBytes: (0..<20).map { _ in UInt8.random(in: 0...255) })
        while true {
            try Task.checkCancellation()
            guard let connection = state.withLock({ $0.connection }) else {
                try await Task.sleep(for: .milliseconds(100))
                continue
            }
            do {
                let (proposalProperties, proposalBody) = ProposeChangesRequest(
                    rows: [ProposedChange(docID: docID, revisionID: revisionID, bodySize: body.count)]
                ).encode()
                let answer = try await connection.sendRequest(
                    BLIPMessage(
                        kind: .request, properties: BLIPProperties(proposalProperties.pairs), body: proposalBody))
                let reply = try ProposeChangesReply(
                    properties: MessageProperties(answer.properties.pairs), body: answer.body)
                guard reply.status(at: 0) == .accepted else {
                    throw LeanClientError.refused(docID, reply.status(at: 0))
                }
                let (revProperties, revBody) = RevRequest(
                    docID: docID, revision: .tree(revisionID), sequence: .integer(sequence), noConflicts: true,
                    body: body
                ).encode()
                _ = try await connection.sendRequest(
                    BLIPMessage(kind: .request, properties: BLIPProperties(revProperties.pairs), body: revBody))
                return
            } catch let error as LeanClientError {
                throw error
            } catch {
                // The connection was lost mid-push: the next one proposes the document again.
                try await Task.sleep(for: .milliseconds(100))
            }
        }
    }
}

enum LeanClientError: Error, CustomStringConvertible {
    case refused(String, ProposeChangesReply.Status)

    var description: String {
        switch self {
        case .refused(let docID, let status): "the gateway refused \(docID): status \(status.code)"
        }
    }
}
