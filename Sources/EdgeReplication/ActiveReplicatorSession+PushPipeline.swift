import EdgeStore

// The push pipeline: batches of local changes proposed and sent several at a time, in the one-shot
// backlog and in continuous mode alike.
extension ActiveReplicatorSession {
    /// Batches proposed and being sent, and how far the checkpoint's `local` may move.
    ///
    /// Several batches are in flight at once, so the upstream always has revisions to store while earlier
    /// ones commit (LiteCore keeps up to 5 change lists in flight, `kMaxChangeListsInFlight`). `local` only
    /// moves past a batch once it and every batch before it are done. A batch that lists a document still in
    /// flight waits for that batch first, so no revision is proposed on top of one the upstream may not
    /// have yet.
    struct PushBatchesInFlight {
        /// Last sequences of the batches not yet checkpointed, oldest first.
        private var ends: [Int64] = []
        private var documentsInFlight: [Int64: Set<String>] = [:]

        var isEmpty: Bool { documentsInFlight.isEmpty }

        func hasRoom(for documents: Set<String>) -> Bool {
            documentsInFlight.count < ActiveReplicatorSession.maxPushBatchesInFlight
                && documentsInFlight.values.allSatisfy { $0.isDisjoint(with: documents) }
        }

        mutating func start(_ batch: [Change], documents: Set<String>) -> Int64 {
            let end = batch.last?.sequence ?? 0
            ends.append(end)
            documentsInFlight[end] = documents
            return end
        }

        /// Marks the batch ending at `end` done; returns the sequence `local` may now move to, if it moved.
        mutating func finish(_ end: Int64) -> Int64? {
            documentsInFlight[end] = nil
            var completedThrough: Int64?
            while let first = ends.first, documentsInFlight[first] == nil {
                ends.removeFirst()
                completedThrough = first
            }
            return completedThrough
        }
    }

    /// What the push pipeline waits for.
    enum PushEvent: Sendable {
        /// The feed's next committed batch (`nil` once caught up), and the feed moved past it.
        case read([Change]?, ChangeFeed.AsyncIterator)
        /// A batch was proposed and its accepted revisions sent.
        case sent(end: Int64)
        /// A write committed after the feed caught up.
        case committed
    }

    /// Where the pipeline's reading of the feed stands.
    private enum FeedState {
        /// Ready for the next read.
        case ready
        case reading
        /// A batch was read and waits for room in the pipeline.
        case holding([Change], documents: Set<String>)
        /// Nothing more is committed.
        case caughtUp
        case waitingForCommit
        /// Stopping: nothing more is read.
        case closed
    }

    /// Reads batches from `feed` and pushes them, up to `maxPushBatchesInFlight` at once. A one-shot push
    /// returns once the feed has caught up and every batch is done; a continuous one then waits for the next
    /// commit, and ends only when stopped or cancelled. Once stopping, nothing more is read (and a continuous
    /// push is cancelled, batches in flight included, by `stopContinuous`). Idleness is reported whenever
    /// nothing is in flight and nothing more is committed.
    func pushBatches(from feed: ChangeFeed.AsyncIterator) async throws {
        do {
            try await runBatches(from: feed)
        } catch StoreError.cancelled {
            // A read or a batch in flight was inside a store call when a stop cancelled it: a stop, not a store
            // failure.
            throw CancellationError()
        }
    }

    private func runBatches(from feed: ChangeFeed.AsyncIterator) async throws {
        try await withThrowingTaskGroup(of: PushEvent.self) { group in
            var batches = PushBatchesInFlight()
            var feed = feed
            var state = FeedState.ready
            var reportedIdle = false
            while true {
                if isStopping {
                    state = .closed
                }
                if case .holding(let batch, let documents) = state, batches.hasRoom(for: documents) {
                    let end = batches.start(batch, documents: documents)
                    reportedIdle = false
                    group.addTask {
                        try await self.send(try await self.proposeBatch(batch))
                        return .sent(end: end)
                    }
                    state = .ready
                }
                switch state {
                case .ready:
                    state = .reading
                    group.addTask { [feed] in try await Self.read(feed) }
                case .caughtUp where configuration.continuous:
                    state = .waitingForCommit
                    group.addTask { [feed] in
                        await feed.waitForCommit()
                        return .committed
                    }
                case .caughtUp, .reading, .holding, .waitingForCommit, .closed:
                    break
                }
                switch state {
                case .caughtUp, .waitingForCommit, .closed:
                    if batches.isEmpty, !reportedIdle {
                        reportedIdle = true
                        await setIdle(push: true)
                    }
                case .ready, .reading, .holding:
                    break
                }
                guard let event = try await group.next() else { return }
                try Task.checkCancellation()
                switch (event, state) {
                case (.read(let batch, let movedFeed), .reading):
                    feed = movedFeed
                    state = batch.map { .holding($0, documents: Set($0.map(\.docID))) } ?? .caughtUp
                case (.committed, .waitingForCommit):
                    state = .ready
                case (.sent(let end), _):
                    if let completedThrough = batches.finish(end) {
                        await checkpointer.setLocal(UInt64(completedThrough))
                    }
                case (.read, _), (.committed, _):
                    // Read or woken after a stop closed the feed.
                    break
                }
            }
        }
    }

    private static func read(_ feed: ChangeFeed.AsyncIterator) async throws -> PushEvent {
        var feed = feed
        return .read(try await feed.nextCommitted(), feed)
    }
}
