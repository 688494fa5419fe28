import BLIPCodec
import BLIPConnection
import EdgeStore
import Foundation
import Logging
import ReplicationProtocol
import SyncJSON
import UpstreamDialer

/// A puller that behaves as Couchbase Lite 3.2.4's does (LiteCore's `Puller`, `RevFinder` and `Inserter`), for
/// measuring and testing how a passive peer serves it: the same `subChanges`, the same `changes` replies, the
/// same limits on revisions requested, in flight and waiting for insertion (`LiteCorePullerTuning`), batched
/// inserts answered only once committed, and LiteCore's checkpoint exchange. BLIP ACKs every 50,000 bytes of a
/// large incoming message, as LiteCore's BLIP does (`MessageAssembler.defaultAckThreshold`).
///
/// It pulls the default collection into `database`. What it does not do, because the documents it is
/// measured with never need it: fetch blobs (a `rev` whose body refers to one is refused with `HTTP/501`), purge
/// revoked documents (a revocation row is not requested and counts as done), resolve conflicts (a pulled
/// revision that conflicts is stored as a branch, as LiteCore's store does before its conflict resolver runs).
public struct LiteCoreShapedPuller: Sendable {
    public struct Configuration: Sendable {
        /// The remote database, e.g. `ws://127.0.0.1:4984/db`; `/_blipsync` is appended.
        public var url: String
        public var continuous: Bool
        /// The checkpoint's document ID on the peer (`client` of `getCheckpoint`/`setCheckpoint`); LiteCore
        /// derives it from the local database's UUID and the remote URL.
        package var checkpointID: String
        package var tuning: LiteCorePullerTuning

        public init(
            url: String, continuous: Bool = false, checkpointID: String = "cp-litecore-shaped-puller",
            tuning: LiteCorePullerTuning = LiteCorePullerTuning()
        ) {
            self.url = url
            self.continuous = continuous
            self.checkpointID = checkpointID
            self.tuning = tuning
        }
    }

    /// How a pull went.
    public struct Report: Sendable {
        public var counters: PullerCounters
        /// The `remote` of the last checkpoint saved on the peer.
        package var savedCheckpoint: JSONValue?
        /// The `since` the pull started from (the saved checkpoint's `remote`).
        package var startedSince: JSONValue?
        /// Every `setCheckpoint` body sent, in order.
        package var savedCheckpointBodies: [String]
    }

    public let database: DocumentDatabase
    public let configuration: Configuration
    let logger: Logger

    public init(database: DocumentDatabase, configuration: Configuration, logger: Logger) {
        self.database = database
        self.configuration = configuration
        self.logger = logger
    }

    /// Pulls until caught up with every requested revision stored (one-shot), or until `stop` returns
    /// (continuous); then saves the checkpoint and closes the connection with 1000.
    public func run(until stop: @escaping @Sendable () async -> Void = {}) async throws -> Report {
        let dialer = UpstreamDialer(
            target: try UpstreamTarget(url: configuration.url + "/_blipsync"),
            options: .init(
                subprotocols: ReplicationSubprotocol.revisionTreeOffer.map(\.rawValue),
                headers: [("User-Agent", "LiteCoreShapedPuller (CouchbaseLite/3.2.4 flow control)")]),
            logger: logger)
        let outcome = ReportBox()
        try await dialer.run { session in
            let connection = try BLIPConnection(subprotocol: session.subprotocol, logger: logger)
            let flow = PullFlowControl(tuning: configuration.tuning)
            let inserter = RevisionBatchInserter(
                database: database, collection: .default, tuning: configuration.tuning,
                committed: { sequences in await flow.finishRevs(sequences) })
            let handlers = PullRequestHandlers(
                database: database, flow: flow, inserter: inserter, tuning: configuration.tuning)
            await connection.setHandler(for: Profile.changes.rawValue) { try await handlers.changes($0) }
            await connection.setHandler(for: Profile.rev.rawValue) { try await handlers.rev($0) }
            await connection.setHandler(for: Profile.norev.rawValue) { try await handlers.norev($0) }
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    let ending = try await connection.run(inbound: session.inbound, outbound: session.outbound)
                    await flow.close()
                    if await !outcome.isFinished {
                        throw LiteCoreShapedPullerError.connectionEnded("\(ending)")
                    }
                }
                group.addTask {
                    do {
                        let report = try await pull(over: connection, flow: flow, until: stop)
                        await outcome.finish(report)
                        await connection.close(.normal)
                    } catch {
                        await connection.close(.internalError, reason: "\(error)")
                        throw error
                    }
                }
                try await group.waitForAll()
            }
        }
        guard let report = await outcome.report else {
            throw LiteCoreShapedPullerError.connectionEnded("before the pull finished")
        }
        return report
    }

    private func pull(
        over connection: BLIPConnection, flow: PullFlowControl, until stop: @Sendable () async -> Void
    ) async throws -> Report {
        var checkpoints = CheckpointExchange(connection: connection, client: configuration.checkpointID)
        let since = try await checkpoints.fetch()
        // LiteCore's `skipDeleted`: a first pull into an empty database leaves tombstones out.
        let localIsEmpty = try await database.changes(in: .default, since: 0, limit: 1).isEmpty
        let activeOnly = since == nil && localIsEmpty
        let (properties, body) = Self.subscription(
            since: since, continuous: configuration.continuous, activeOnly: activeOnly, tuning: configuration.tuning
        ).encode()
        _ = try await connection.sendRequest(
            BLIPMessage(kind: .request, properties: BLIPProperties(properties.pairs), body: body))

        let fetched = checkpoints
        let tuning = configuration.tuning
        let saver = Task {
            var saver = fetched
            while !Task.isCancelled {
                try? await Task.sleep(for: tuning.checkpointSaveDelay)
                guard !Task.isCancelled else { break }
                try await saver.save(await flow.checkpointSequence)
            }
            return saver
        }
        if configuration.continuous {
            await stop()
        } else {
            await flow.waitUntilDone()
        }
        saver.cancel()
        if let saved = try? await saver.value {
            checkpoints = saved
        } else {
            // Cancelled in the middle of a save (or a save failed): whether the peer stored it is unknown, so the
            // current revision is fetched again before the final save.
            checkpoints = fetched
            _ = try await checkpoints.fetch()
        }
        if await flow.isClosed {
            throw LiteCoreShapedPullerError.connectionEnded("before the pull finished")
        }
        try await checkpoints.save(await flow.checkpointSequence)
        return Report(
            counters: await flow.counters, savedCheckpoint: checkpoints.savedSequence, startedSince: since,
            savedCheckpointBodies: checkpoints.sentBodies)
    }
}

extension LiteCoreShapedPuller {
    /// `subChanges` as LiteCore 3.2.4's `Puller::_start` sends it: `since` when resuming, `continuous`,
    /// `batch`, `sendReplacementRevs: 1`, `versioning: rev-trees`, `activeOnly` for a first pull into an empty
    /// database, `revocations: true` (CBL enables progress notifications).
    static func subscription(
        since: JSONValue?, continuous: Bool, activeOnly: Bool, tuning: LiteCorePullerTuning
    ) -> SubChangesRequest {
        SubChangesRequest(
            since: since, continuous: continuous, batchSize: tuning.changesBatchSize, sendReplacementRevs: true,
            versioning: .revisionTrees, activeOnly: activeOnly, revocations: true)
    }
}

package enum LiteCoreShapedPullerError: Error, CustomStringConvertible {
    case connectionEnded(String)
    case peerRefused(request: String, BLIPErrorReply)

    package var description: String {
        switch self {
        case .connectionEnded(let why): "the connection ended \(why)"
        case .peerRefused(let request, let error): "the peer refused \(request): \(error)"
        }
    }
}

/// The report, once the pull finished, for `run` to return after the connection closed.
private actor ReportBox {
    var report: LiteCoreShapedPuller.Report?
    var isFinished: Bool { report != nil }

    func finish(_ report: LiteCoreShapedPuller.Report) {
        self.report = report
    }
}
