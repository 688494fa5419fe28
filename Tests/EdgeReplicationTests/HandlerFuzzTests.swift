import BLIPCodec
import BLIPConnection
import CMalloc
import Crypto
import EdgeGatewayTestSupport
import EdgeReplication
import EdgeStore
import Foundation
import Logging
import ReplicationProtocol
import SyncIdentifiers
import SyncJSON
import Synchronization
import Testing

/// Seeded mutations of valid replication requests sent to the passive side's real handlers
/// (`PassiveReplicationSession`) and a real store, over two `BLIPConnection`s joined in memory (no socket, no
/// WebSocket framing: the cheapest layer that still runs the handlers, their BLIP replies and the requests the
/// gateway sends back: `getAttachment` for pushed blobs, `changes` and `rev` for pull feeds).
///
/// Every input must be answered, with a success or an error reply whose domain and code make sense, within
/// `inputTimeout`; the gateway must never close the connection. Every `storeInputs` inputs, and at the end, the
/// store is checked: SQLite integrity, every acknowledged revision readable with its body, every blob file
/// hashing to its name, and a well-formed client pushing and pulling through a new connection. Then the store is
/// replaced by a fresh one, so that a long run's memory and disk stay bounded.
///
/// CI runs 100,000 inputs. Longer: `HANDLER_FUZZ_ITERATIONS=1000000 swift test --filter HandlerFuzzTests`
/// (`scripts/reliability/fuzz handlers`); `HANDLER_FUZZ_SEED` replays a run.
@Suite("Fuzzing the replication message handlers")
struct HandlerFuzzTests {
    static var iterations: Int {
        ProcessInfo.processInfo.environment["HANDLER_FUZZ_ITERATIONS"].flatMap(Int.init) ?? 100_000
    }

    static var seed: UInt64 {
        ProcessInfo.processInfo.environment["HANDLER_FUZZ_SEED"].flatMap(UInt64.init) ?? 0x0000_F022_4A9D
    }

    /// Requests in flight at once on a connection, each from its own generator.
    static let workers = 8
    static let connectionInputs = 2_500
    static let storeInputs = 25_000
    static let inputTimeout = Duration.seconds(30)

    @Test("mutated requests are answered sensibly; the store stays sound and usable")
    func mutatedRequests() async throws {
        let recorded = try Self.recordedRequests()
        #expect(recorded.count > 50)
        let seed = Self.seed
        print("fuzz: handlers, \(Self.iterations) inputs, seed \(seed), \(recorded.count) recorded requests")
        let tally = HandlerFuzzTally()
        let started = ContinuousClock.now
        var done = 0
        var storeIndex = 0
        while done < Self.iterations {
            let storeCount = min(Self.storeInputs, Self.iterations - done)
            try await FuzzStore.with { store in
                var storeDone = 0
                var connectionIndex = 0
                while storeDone < storeCount {
                    let count = min(Self.connectionInputs, storeCount - storeDone)
                    let epoch = UInt64(storeIndex * 1_000 + connectionIndex)
                    try await Self.fuzzConnection(
                        store: store, inputs: count, epoch: epoch, seed: seed, recorded: recorded, tally: tally)
                    storeDone += count
                    connectionIndex += 1
                }
                try await Self.checkInvariants(of: store, tally: tally)
                try await Self.checkWellFormedClient(on: store, label: "after store \(storeIndex)")
            }
            done += storeCount
            storeIndex += 1
            // What the gateway's `serve` does every 10 s (`HeapTrim`): without it glibc keeps the pages these stores
            // freed, and the resident size climbs about 55 bytes an input while heaptrack counts a peak heap of
            // 30 MB over 100,000 inputs and under 1 MB still allocated at the end (RELIABILITY.md, "Fuzzing").
            CMalloc_releaseFreeMemory()
            let status = ProcessStatus()
            print(
                "fuzz: handlers progress: \(done) inputs, \(ContinuousClock.now - started), resident \(status["VmRSS"]) KiB (anonymous \(status["RssAnon"]), file \(status["RssFile"]), shared \(status["RssShmem"]))"
            )
        }
        let elapsed = ContinuousClock.now - started
        let summary = tally.summary
        print(
            "fuzz: handlers, \(Self.iterations) inputs, seed \(seed), \(elapsed), peak RSS \(Self.peakResidentKiB()) KiB: \(summary.overview)"
        )
        print(
            "fuzz: handlers, the gateway's requests to the client: \(summary.gatewayRequests.sorted { $0.key < $1.key })"
        )
        print(
            "fuzz: handlers outcomes: \(summary.outcomes.sorted { $0.key < $1.key }.map { "\($0.key) ×\($0.value)" }.joined(separator: ", "))"
        )
        for finding in summary.findings.prefix(40) {
            print("fuzz: handlers finding: \(finding)")
        }
        #expect(summary.findings.isEmpty, "\(summary.findings.count) findings")
        #expect(summary.answered + summary.unansweredNoReply == summary.sent)
        #expect(summary.successes > Self.iterations / 10 && summary.errors > Self.iterations / 10)
        #expect(summary.acknowledged > 0)
        #expect(summary.acknowledgedOverVersionVectors > 0)
    }

    // MARK: - One connection

    static func fuzzConnection(
        store: FuzzStore, inputs: Int, epoch: UInt64, seed: UInt64, recorded: [BLIPMessage], tally: HandlerFuzzTally
    ) async throws {
        // One connection in four declares its collections first (collection-aware mode, spec §3.0), one in eight
        // with a malformed getCollections. Another one in four speaks CBMobile_4 as Couchbase Lite 4.x does:
        // version vectors, and its collections declared first.
        let subprotocol = epoch % 4 == 1 ? "BLIP_3+CBMobile_4" : "BLIP_3+CBMobile_3"
        let collection: Int? = epoch % 4 == 3 || epoch % 4 == 1 ? 0 : nil
        let getCollectionsBodies = [
            #"{"collections":["_default._default","s.c"],"checkpoint_ids":["a","b"]}"#,
            #"{"collections":["_default._default","_default._default","_default._default"],"checkpoint_ids":["a","a","a"]}"#,
            #"{"collections":["_default._default"],"checkpoint_ids":[]}"#,
            #"{"collections":[],"checkpoint_ids":["a"]}"#, #"{"collections":"_default._default"}"#, "", "[]", "{",
            #"{"collections":["a.b.c","","..","_default","\u0000"],"checkpoint_ids":[1,null,"x","y","z"]}"#,
            manyCollections,
        ]
        let blobs = ClientBlobTable()
        try await FuzzLink.with(store: store, blobs: blobs, seed: seed ^ epoch, subprotocol: subprotocol) { link in
            if collection != nil {
                var chooser = SplitMix64(seed: seed ^ epoch)
                let body =
                    epoch % 8 == 7 ? getCollectionsBodies.randomElement(using: &chooser)! : getCollectionsBodies[0]
                let input = HandlerFuzzInput(
                    label: "getCollections/first", message: .request(profile: "getCollections", body: Array(body.utf8)))
                let outcome = await Self.exchange(input, over: link.client)
                tally.record(input, outcome)
            }
            let remaining = InputBudget(inputs)
            let watchdog = InputWatchdog()
            let workers = (0..<Self.workers).map { worker in
                Task {
                    var generator = HandlerFuzzInputs(
                        recorded: recorded, blobs: blobs, collection: collection, prefix: "w\(epoch)-\(worker)",
                        seed: seed ^ (epoch << 8 | UInt64(worker)))
                    while remaining.take() {
                        let input = generator.next()
                        for _ in 0..<(input.isDuplicated ? 2 : 1) {
                            watchdog.started(worker)
                            let outcome = await Self.exchange(input, over: link.client)
                            watchdog.finished(worker)
                            tally.record(input, outcome)
                            if case .acknowledged = outcome, let pushed = input.pushed {
                                store.acknowledge(pushed)
                                if subprotocol.hasSuffix("CBMobile_4") { tally.countAcknowledgedOverVersionVectors() }
                            }
                            switch outcome {
                            case .connectionLost, .timedOut: return
                            case .acknowledged, .error, .sentWithoutReply: break
                            }
                        }
                    }
                }
            }
            let guarding = Task { await watchdog.guardInputs(of: workers, timeout: Self.inputTimeout) }
            for worker in workers {
                await worker.value
            }
            guarding.cancel()
            tally.countGatewayRequests(link.handlers.requestsReceived)
            for close in link.link.closes.withLock({ $0 }) where close.byGateway {
                tally.finding("the gateway closed the connection: \(close.code) \(close.reason)")
            }
        }
    }

    /// getCollections naming the default collection 5,000 times.
    static let manyCollections: String = {
        let names = [String](repeating: #""_default._default""#, count: 5_000).joined(separator: ",")
        let checkpoints = [String](repeating: #""c""#, count: 5_000).joined(separator: ",")
        return #"{"collections":[\#(names)],"checkpoint_ids":[\#(checkpoints)]}"#
    }()

    enum Outcome: Sendable {
        case acknowledged
        case error(domain: String, code: Int, message: String)
        case sentWithoutReply
        case connectionLost(String)
        case timedOut
    }

    static func exchange(_ input: HandlerFuzzInput, over client: BLIPConnection) async -> Outcome {
        if input.message.isNoReply {
            do {
                try await client.sendNoReply(input.message)
                return .sentWithoutReply
            } catch {
                return .connectionLost("\(error)")
            }
        }
        do {
            _ = try await client.sendRequest(input.message)
            return .acknowledged
        } catch let error as BLIPErrorReply {
            return .error(domain: error.domain, code: error.code, message: error.message)
        } catch is CancellationError {
            // Only `InputWatchdog` cancels a worker: the reply did not come in time.
            return .timedOut
        } catch {
            return .connectionLost("\(error)")
        }
    }

    // MARK: - Invariants

    static func checkInvariants(of store: FuzzStore, tally: HandlerFuzzTally) async throws {
        let database = store.database
        #expect(try await database.integrityCheck() == ["ok"])
        var checked = 0
        for pushed in store.acknowledged {
            let revID = try RevisionID(pushed.revID)
            let leaves = try await database.leafRevisions(pushed.docID)
            let maxGeneration = leaves.map(\.revID.generation).max() ?? 0
            guard let revision = try await database.revision(pushed.docID, revID: revID) else {
                // Pruned legitimately only when a branch grew past the tree depth above it.
                if maxGeneration < revID.generation + 20 {
                    tally.finding("acknowledged \(pushed.docID) \(pushed.revID) is not in the store")
                }
                continue
            }
            guard leaves.contains(where: { $0.revID == revID }) else { continue }
            checked += 1
            if revision.deleted != pushed.deleted {
                tally.finding("acknowledged \(pushed.docID) \(pushed.revID): deleted is \(revision.deleted)")
            }
            guard !revision.deleted else { continue }
            guard let body = revision.body, (try? JSONValue(parsing: Array(body)))?.objectValue != nil else {
                tally.finding("acknowledged leaf \(pushed.docID) \(pushed.revID) has no readable body")
                continue
            }
            if let expected = pushed.storedBody, Array(body) != expected {
                tally.finding(
                    "acknowledged leaf \(pushed.docID) \(pushed.revID) has another body than was pushed: \(String(decoding: body.prefix(200), as: UTF8.self)) instead of \(String(decoding: expected.prefix(200), as: UTF8.self))"
                )
            }
        }
        tally.countCheckedLeaves(checked, acknowledged: store.acknowledged.count)
        let names = try FileManager.default.contentsOfDirectory(atPath: database.blobs.directory.path)
        var blobFiles = 0
        for name in names where name.hasSuffix(".blob") {
            blobFiles += 1
            let bytes = try Data(contentsOf: database.blobs.directory.appendingPathComponent(name))
            let hex = Insecure.SHA1.hash(data: bytes).map { String(format: "%02x", $0) }.joined()
            if name != "\(hex).blob" {
                tally.finding("blob file \(name) holds bytes hashing to \(hex)")
            }
        }
        tally.countBlobFiles(blobFiles)
    }

    /// A client that follows the protocol pushes three documents (one with a blob), then pulls them back and
    /// fetches the blob, over a new connection to the fuzzed store.
    static func checkWellFormedClient(on store: FuzzStore, label: String) async throws {
        let blobs = ClientBlobTable()
        let blob = Array("well-formed blob \(label)".utf8)
        let digest = ClientBlobTable.digest(of: blob)
        blobs.serve(blob, as: digest)
        let marker = UUID().uuidString
        let documents: [(docID: String, revID: String, body: String)] = [
            ("wellformed-\(marker)-0", "1-" + String(repeating: "a", count: 40), #"{"n":0}"#),
            ("wellformed-\(marker)-1", "1-" + String(repeating: "b", count: 40), #"{"n":1,"s":"text"}"#),
            (
                "wellformed-\(marker)-2", "1-" + String(repeating: "c", count: 40),
                #"{"f":{"@type":"blob","digest":"\#(digest)","length":\#(blob.count)}}"#
            ),
        ]
        try await FuzzLink.with(store: store, blobs: blobs, seed: 1) { link in
            let client = link.client
            let rows = documents.map { #"["\#($0.docID)","\#($0.revID)"]"# }.joined(separator: ",")
            let proposal = try await client.sendRequest(
                .request(profile: "proposeChanges", body: Array("[\(rows)]".utf8)))
            let statuses = try JSONValue(parsing: proposal.body).arrayValue ?? []
            #expect(statuses.allSatisfy { $0.intValue == 0 }, "\(label): proposeChanges answered \(statuses)")
            for document in documents {
                let reply = try await client.sendRequest(
                    .request(
                        profile: "rev", properties: ["id": document.docID, "rev": document.revID],
                        body: Array(document.body.utf8)))
                #expect(reply.kind == .reply, "\(label): rev \(document.docID)")
            }
            let ids = documents.map { "\"\($0.docID)\"" }.joined(separator: ",")
            _ = try await client.sendRequest(
                .request(
                    profile: "subChanges", properties: ["versioning": "rev-trees"],
                    body: Array(#"{"docIDs":[\#(ids)]}"#.utf8)))
            try await eventually(timeout: .seconds(30)) { link.handlers.pulled.count >= documents.count }
            let pulled = link.handlers.pulled
            for document in documents {
                #expect(pulled[document.docID]?.revID == document.revID, "\(label): pulled \(document.docID)")
            }
            #expect(
                try pulled[documents[1].docID].map { try JSONValue(parsing: $0.body) }
                    == JSONValue(parsing: Array(documents[1].body.utf8)))
            let attachment = try await client.sendRequest(
                .request(profile: "getAttachment", properties: ["digest": digest, "docID": documents[2].docID]))
            #expect(attachment.body == blob, "\(label): getAttachment")
        }
    }

    static func eventually(timeout: Duration, _ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + timeout
        while !condition() {
            guard ContinuousClock.now < deadline else {
                Issue.record("timed out")
                return
            }
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    // MARK: - Seed corpus

    /// Transcripts by fixture set. The 4.0.3 requests (version vectors, `collection` on every request) reach the
    /// same session, which stores a vector wherever it arrives and refuses their version-vector pulls (501).
    static let corpusFiles = [
        "cbl-3.2.4": [
            "push-oneshot.jsonl", "pull-oneshot.jsonl", "pushpull-continuous.jsonl", "conflict.jsonl",
            "collections.jsonl", "blob.jsonl", "delta.jsonl", "update-delete.jsonl", "pull-tombstone.jsonl",
        ],
        "cbl-4.0.3": [
            "push-oneshot.jsonl", "pull-oneshot.jsonl", "pushpull-continuous.jsonl", "conflict.jsonl",
            "collections.jsonl", "blob.jsonl", "update-delete.jsonl", "pull-tombstone.jsonl",
        ],
    ]

    /// The requests Couchbase Lite 3.2.4 and 4.0.3 sent in the fixture transcripts, decoded from their frames.
    static func recordedRequests() throws -> [BLIPMessage] {
        var requests: [BLIPMessage] = []
        for (set, names) in corpusFiles.sorted(by: { $0.key < $1.key }) {
            for connection in try names.flatMap({ try RecordedClientConnection.load($0, from: set) }) {
                let decoder = BLIPFrameDecoder(maxFrameSize: 1 << 20, maxInflatedFrameSize: 4 << 20)
                var assembler = MessageAssembler(maxMessageSize: 16 << 20)
                for number in 1...4_096 {
                    assembler.expectReply(to: UInt64(number))
                }
                for frame in connection.frames {
                    guard case .data(let data)? = try? decoder.decode(frame.payload),
                        let message = try? assembler.receive(data).message
                    else { continue }
                    if message.kind == .request, message.profile != nil {
                        requests.append(message)
                    }
                }
            }
        }
        return requests
    }

    static func peakResidentKiB() -> Int { ProcessStatus()["VmHWM"] }
}

// MARK: - Harness

/// A fresh store for fuzzing, in a temporary directory (on tmpfs when there is one: the store's per-commit fsync
/// is not what is being tested), with the revisions it acknowledged.
final class FuzzStore: Sendable {
    let database: DocumentDatabase
    private let acknowledgedRevisions = Mutex<[HandlerFuzzInput.PushedRevision]>([])

    init(database: DocumentDatabase) {
        self.database = database
    }

    var acknowledged: [HandlerFuzzInput.PushedRevision] { acknowledgedRevisions.withLock { $0 } }

    func acknowledge(_ revision: HandlerFuzzInput.PushedRevision) {
        acknowledgedRevisions.withLock { $0.append(revision) }
    }

    static func with(_ body: (FuzzStore) async throws -> Void) async throws {
        let shm = URL(fileURLWithPath: "/dev/shm")
        let parent = FileManager.default.isWritableFile(atPath: shm.path) ? shm : FileManager.default.temporaryDirectory
        let directory = parent.appendingPathComponent("handler-fuzz-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let released = try await run(in: directory, body)
        let deadline = ContinuousClock.now + .seconds(10)
        while released.object != nil {
            guard ContinuousClock.now < deadline else {
                throw FuzzLink.NotReleased(description: "a closed store's database was not freed within 10 s")
            }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    private static func run(
        in directory: URL, _ body: (FuzzStore) async throws -> Void
    ) async throws -> WeakReference<DocumentDatabase> {
        let store = try DocumentStore(dataDirectory: directory)
        let database = try await store.database(named: "db")
        try await body(FuzzStore(database: database))
        try database.close()
        return WeakReference(database)
    }
}

/// The gateway's side (a `PassiveReplicationSession` on a `BLIPConnection`) and a client connection, joined in
/// memory.
struct FuzzLink: Sendable {
    let link: InMemoryBLIPLink
    let client: BLIPConnection
    let handlers: FuzzClientHandlers

    static var logger: Logger {
        var logger = Logger(label: "handler-fuzz")
        logger.logLevel = .critical
        return logger
    }

    static func with(
        store: FuzzStore, blobs: ClientBlobTable, seed: UInt64, subprotocol: String = "BLIP_3+CBMobile_3",
        _ body: @Sendable (FuzzLink) async throws -> Void
    ) async throws {
        let (session, gateway, client) = try await run(
            store: store, blobs: blobs, seed: seed, subprotocol: subprotocol, body)
        try await awaitRelease(session, gateway, client)
    }

    /// Runs `body` on a new link; returns the gateway's session and connection, weakly held, once both ended.
    private static func run(
        store: FuzzStore, blobs: ClientBlobTable, seed: UInt64, subprotocol: String,
        _ body: @Sendable (FuzzLink) async throws -> Void
    ) async throws -> (
        WeakReference<PassiveReplicationSession>, WeakReference<BLIPConnection>, WeakReference<BLIPConnection>
    ) {
        let link = InMemoryBLIPLink()
        let gateway = try BLIPConnection(subprotocol: subprotocol, logger: logger)
        let client = try BLIPConnection(subprotocol: subprotocol, logger: logger)
        let session = PassiveReplicationSession(connection: gateway, database: store.database, logger: logger)
        await session.start()
        let handlers = FuzzClientHandlers(blobs: blobs, seed: seed)
        await handlers.register(on: client)
        let gatewayRun = Task { _ = try? await gateway.run(incoming: link.gatewayIncoming, writer: link.gatewayWriter) }
        let clientRun = Task { _ = try? await client.run(incoming: link.clientIncoming, writer: link.clientWriter) }
        let result = await Result(catching: { try await body(FuzzLink(link: link, client: client, handlers: handlers)) }
        )
        await client.close()
        try await Self.awaitEnd(of: clientRun, "the client connection")
        link.end()
        try await Self.awaitEnd(of: gatewayRun, "the gateway connection")
        await session.stop()
        try result.get()
        return (WeakReference(session), WeakReference(gateway), WeakReference(client))
    }

    /// A closed connection's session and BLIP connections must be freed, or every connection leaks them.
    static func awaitRelease(
        _ session: WeakReference<PassiveReplicationSession>, _ connection: WeakReference<BLIPConnection>,
        _ client: WeakReference<BLIPConnection>
    ) async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while session.object != nil || connection.object != nil || client.object != nil {
            guard ContinuousClock.now < deadline else {
                throw NotReleased(
                    description:
                        "10 s after its connection ended, the session is \(session.object == nil ? "freed" : "alive"), the gateway's BLIP connection \(connection.object == nil ? "freed" : "alive"), the client's \(client.object == nil ? "freed" : "alive")"
                )
            }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    struct NotReleased: Error, CustomStringConvertible {
        var description: String
    }

    struct DidNotEnd: Error, CustomStringConvertible {
        var description: String
    }

    /// Waits for a connection's run to return once its link has ended; a run that does not is a hang.
    static func awaitEnd(of run: Task<Void, Never>, _ what: String) async throws {
        let ended = Atomic<Bool>(false)
        let (signal, signalSink) = AsyncStream.makeStream(of: Void.self)
        Task {
            await run.value
            signalSink.yield()
        }
        let timeout = Task {
            try? await Task.sleep(for: .seconds(30))
            signalSink.finish()
        }
        for await _ in signal {
            ended.store(true, ordering: .relaxed)
            break
        }
        timeout.cancel()
        guard ended.load(ordering: .relaxed) else {
            throw DidNotEnd(description: "\(what) did not end within 30 s of its link closing")
        }
    }
}

/// The client's answers to what the gateway asks: `changes` and `rev` of a pull feed (sometimes refused or
/// malformed), `getAttachment` for a pushed blob (from `ClientBlobTable`, which may hold the wrong bytes).
final class FuzzClientHandlers: Sendable {
    let blobs: ClientBlobTable
    private let generator: Mutex<SplitMix64>
    private let pulledRevisions = Mutex<[String: (revID: String, body: [UInt8])]>([:])
    private let received = Mutex<[String: Int]>([:])

    /// The gateway's requests to this client, by profile.
    var requestsReceived: [String: Int] { received.withLock { $0 } }

    private func count(_ request: BLIPMessage) {
        received.withLock { $0[request.profile ?? "", default: 0] += 1 }
    }

    init(blobs: ClientBlobTable, seed: UInt64) {
        self.blobs = blobs
        generator = Mutex(SplitMix64(seed: seed))
    }

    var pulled: [String: (revID: String, body: [UInt8])] { pulledRevisions.withLock { $0 } }

    private func roll() -> Int { generator.withLock { Int.random(in: 0..<100, using: &$0) } }

    func register(on client: BLIPConnection) async {
        await client.setHandler(for: "changes") { [self] request in
            count(request)
            let rows = (try? JSONValue(parsing: request.body).arrayValue?.count) ?? 0
            let choice = roll()
            let body: String
            var properties: BLIPProperties = [:]
            switch choice {
            case 0..<75: body = "[" + Array(repeating: "[]", count: rows).joined(separator: ",") + "]"
            case 75..<85: body = "[]"
            case 85..<90:
                body =
                    "["
                    + Array(repeating: #"["1-abc","2-\#(String(repeating: "f", count: 40))"]"#, count: rows).joined(
                        separator: ",") + "]"
            case 90..<94: body = "[" + Array(repeating: "404", count: rows).joined(separator: ",") + "]"
            case 94..<97:
                body = "{"
            default:
                body = "[[]]"
                properties = ["maxHistory": "-1", "deltas": "true", "blobs": "maybe"]
            }
            if choice < 40 { properties["deltas"] = "true" }
            if choice % 7 == 0 { properties["blobs"] = "true" }
            return request.reply(properties: properties, body: Array(body.utf8))
        }
        await client.setHandler(for: "rev") { [self] request in
            count(request)
            if let docID = request.properties["id"], let revID = request.properties["rev"] {
                pulledRevisions.withLock { $0[docID] = (revID, request.body) }
            }
            switch roll() {
            case 0..<8: throw BLIPErrorReply(domain: "HTTP", code: 422, message: "delta refused")
            case 8..<11: throw BLIPErrorReply(domain: "HTTP", code: 409, message: "conflict")
            default: return request.reply()
            }
        }
        await client.setHandler(for: "norev") { [self] request in
            count(request)
            return request.reply()
        }
        await client.setHandler(for: "getAttachment") { [self] request in
            count(request)
            guard let digest = request.properties["digest"], let bytes = blobs.bytes(for: digest) else {
                throw BLIPErrorReply(domain: "HTTP", code: 404, message: "no such blob")
            }
            return request.reply(body: bytes, isCompressed: request.properties["compress"] == "true")
        }
    }
}

/// Bounds every input's wait for its reply: one task for all workers cancels a worker whose request has been
/// unanswered for the timeout (its `sendRequest` then throws `CancellationError`). A sleeping task per input
/// would do the same, but on Linux every cancelled `Task.sleep` kept about 1 KiB until long after, which grew
/// the test by hundreds of megabytes per million inputs.
final class InputWatchdog: Sendable {
    private let startTimes = Mutex<[Int: ContinuousClock.Instant]>([:])

    func started(_ worker: Int) {
        startTimes.withLock { $0[worker] = .now }
    }

    func finished(_ worker: Int) {
        startTimes.withLock { $0[worker] = nil }
    }

    func guardInputs(of workers: [Task<Void, Never>], timeout: Duration) async {
        while !Task.isCancelled {
            try? await Task.sleep(for: .seconds(1))
            let now = ContinuousClock.now
            let late = startTimes.withLock { times in times.filter { now - $0.value > timeout }.map(\.key) }
            for worker in late {
                workers[worker].cancel()
            }
        }
    }
}

/// Inputs left to send on a connection, shared by its workers.
final class InputBudget: Sendable {
    private let left: Atomic<Int>

    init(_ count: Int) {
        left = Atomic(count)
    }

    func take() -> Bool { left.subtract(1, ordering: .relaxed).oldValue > 0 }
}

/// What the inputs got, counted across workers.
final class HandlerFuzzTally: Sendable {
    struct Summary {
        var sent = 0
        var answered = 0
        var unansweredNoReply = 0
        var successes = 0
        var errors = 0
        var acknowledged = 0
        /// Pushed revisions acknowledged on CBMobile_4 connections. The generated ones are legacy revisions named
        /// by rev-tree ID (LiteCore 4 pushes a document without a vector so); versions come from the recorded
        /// 4.0.3 requests.
        var acknowledgedOverVersionVectors = 0
        var checkedLeaves = 0
        var blobFiles = 0
        var outcomes: [String: Int] = [:]
        var gatewayRequests: [String: Int] = [:]
        var findings: [String] = []

        var overview: String {
            "sent \(sent), answered \(answered) (success \(successes), error \(errors)), noReply \(unansweredNoReply); acknowledged revisions \(acknowledged) (over CBMobile_4 \(acknowledgedOverVersionVectors)), acknowledged leaves checked \(checkedLeaves), blob files checked \(blobFiles)"
        }
    }

    private let state = Mutex(Summary())

    var summary: Summary { state.withLock { $0 } }

    func finding(_ text: String) {
        state.withLock { $0.findings.append(text) }
    }

    func countCheckedLeaves(_ leaves: Int, acknowledged: Int) {
        state.withLock {
            $0.checkedLeaves += leaves
            $0.acknowledged += acknowledged
        }
    }

    func countGatewayRequests(_ requests: [String: Int]) {
        state.withLock { $0.gatewayRequests.merge(requests, uniquingKeysWith: +) }
    }

    func countAcknowledgedOverVersionVectors() {
        state.withLock { $0.acknowledgedOverVersionVectors += 1 }
    }

    func countBlobFiles(_ count: Int) {
        state.withLock { $0.blobFiles += count }
    }

    static let profiles: Set<String> = [
        "getCollections", "getCheckpoint", "setCheckpoint", "subChanges", "unsubChanges", "proposeChanges", "changes",
        "rev", "norev", "getAttachment", "proveAttachment",
    ]

    /// Error replies that make sense for a bad request; anything else is a finding.
    static func isSensible(domain: String, code: Int) -> Bool {
        switch domain {
        case "HTTP": (400..<500).contains(code) || code == 502
        case "BLIP": code == 400 || code == 404
        case "LiteCore": code > 0
        default: false
        }
    }

    func record(_ input: HandlerFuzzInput, _ outcome: HandlerFuzzTests.Outcome) {
        let profile = input.message.profile.flatMap { Self.profiles.contains($0) ? $0 : nil } ?? "(other profile)"
        state.withLock { summary in
            summary.sent += 1
            switch outcome {
            case .acknowledged:
                summary.answered += 1
                summary.successes += 1
                summary.outcomes["\(profile) ok", default: 0] += 1
            case .error(let domain, let code, let message):
                summary.answered += 1
                summary.errors += 1
                summary.outcomes["\(profile) \(domain)/\(code)", default: 0] += 1
                if !Self.isSensible(domain: domain, code: code) {
                    summary.findings.append("\(domain)/\(code) \"\(message.prefix(200))\" for \(input.summary)")
                }
            case .sentWithoutReply:
                summary.unansweredNoReply += 1
            case .connectionLost(let reason):
                summary.findings.append("connection lost (\(reason)) at \(input.summary)")
            case .timedOut:
                summary.findings.append("no reply within \(HandlerFuzzTests.inputTimeout) to \(input.summary)")
            }
        }
    }
}

extension Result where Failure == any Error {
    init(catching body: () async throws -> Success) async {
        do {
            self = .success(try await body())
        } catch {
            self = .failure(error)
        }
    }
}

final class WeakReference<Object: AnyObject>: @unchecked Sendable {
    weak var object: Object?

    init(_ object: Object) {
        self.object = object
    }
}
