/// The limits and timings of Couchbase Lite 3.2.4's puller, from LiteCore's public
/// `Replicator/ReplicatorTuning.hh` and `RevFinder`/`Puller`/`Inserter`, checked against the recorded 3.2.4
/// client (`../shared/fixtures/cbl-3.2.4/`):
///
/// - `pull-oneshot.jsonl`: `subChanges` with `batch: 200`, `sendReplacementRevs: 1`, `versioning: rev-trees`,
///   `activeOnly: true`, `revocations: true` in that order; the first `changes` reply carries `maxHistory: 50`,
///   `blobs: true`, `deltas: true` and `[[],[],[]]`; the three `rev`s arrive at 5.1 ms and are answered together
///   at 26.6 ms, once their insertion batch was committed after the 20 ms insertion delay; `setCheckpoint`
///   with an empty `rev` and `{"time":…,"remote":3}` follows, then close 1000.
/// - `pushpull-continuous.jsonl`: `continuous: true` comes first, and a client that has documents of its own
///   sends no `activeOnly`; later `changes` replies carry `maxHistory: 50`, `blobs: true` without `deltas`.
public struct LiteCorePullerTuning: Sendable, Hashable {
    /// `batch` in `subChanges` (`kChangesBatchSize`).
    package var changesBatchSize = 200
    /// `kDefaultMaxRevsBeingRequested`: `RevFinder` handles a `changes` message only while the revisions it
    /// requested and that have not arrived yet number at most this many (`_numRevsBeingRequested <=` the
    /// limit); later `changes` wait, unanswered, in arrival order.
    package var maxRevsBeingRequested = 200
    /// `kDefaultMaxIncomingRevs`: `rev`s started and not yet finished (inserted, committed and answered).
    package var maxIncomingRevs = 200
    /// `kMaxActiveIncomingRevs`: `rev`s started and not yet written to the database. A `rev` that arrives
    /// beyond either limit waits, and only counts as received (for `maxRevsBeingRequested`) once started.
    package var maxActiveIncomingRevs = 100
    /// `kInsertionBatchSize`: revisions that trigger an insertion at once.
    package var insertionBatchSize = 100
    /// `kInsertionDelay`: the longest a received revision waits for its batch to fill.
    package var insertionDelay = Duration.milliseconds(20)
    /// `kDefaultMaxHistory`, announced as `maxHistory` in every `changes` reply.
    package var maxHistory = 50
    /// `kDefaultCheckpointSaveDelay`: while pulling, a changed checkpoint is saved this often; it is saved again
    /// when the pull stops. (LiteCore also saves at once whenever a continuous replication goes idle; this
    /// puller does not.)
    package var checkpointSaveDelay = Duration.seconds(5)

    public init() {}
}
