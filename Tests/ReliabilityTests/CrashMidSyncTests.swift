import Crypto
import EdgeGatewayTestSupport
import EdgeStore
import Foundation
import Logging
import SyncIdentifiers
import Testing
import VersionVectors

@testable import EdgeReplication

/// SIGKILL of the gateway process in the middle of a client's push, round after round. CI runs 3 rounds of 2,000
/// documents; `scripts/reliability/crash-mid-sync` runs the full 20 rounds of 100,000.
@Suite("Crash mid-sync: SIGKILL of the gateway during a client's push")
struct CrashMidSyncTests {
    static let rounds = ReliabilityScale.integer("RELIABILITY_CRASH_ROUNDS", default: 3)
    static let documentsPerRound = ReliabilityScale.integer("RELIABILITY_CRASH_DOCUMENTS", default: 2_000)
    /// One document in this many carries a blob, which the gateway fetches from the client with getAttachment.
    static let blobEvery = 20
    static let batchSize = 100
    static let remoteUUID = "crash-mid-sync"
    static let blobKills = ReliabilityScale.integer("RELIABILITY_CRASH_BLOB_KILLS", default: 3)

    static let quietLogger = Logger(label: "reliability.crash") { _ in SwiftLogNoOpLogHandler() }

    struct Seeded {
        var body: Data
        var blob: BlobDigest?
    }

    /// `count` new one-revision documents from `first` on, inserted in one transaction; their blobs written first.
    static func seed(first: Int, count: Int, in database: DocumentDatabase) async throws -> [String: Seeded] {
        var seeded: [String: Seeded] = [:]
        var revisions: [ExistingRevision] = []
        for index in first..<(first + count) {
            let docID = "doc-\(index)"
            var blob: BlobDigest?
            var body = #"{"n":\#(index),"padding":"\#(String(repeating: "x", count: 100))""#
            if index % blobEvery == 0 {
                // Distinct content per document, a few KiB: several frames and a real SHA-1 check per blob.
                let content = Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ index) })
                let digest = try database.blobs.write(content)
                blob = digest
                body +=
                    #","file":{"@type":"blob","digest":"\#(digest)","length":4096,"content_type":"application/octet-stream"}"#
            }
            body += "}"
            seeded[docID] = Seeded(body: Data(body.utf8), blob: blob)
            revisions.append(
                ExistingRevision(
                    docID: docID, revID: try RevisionID("1-" + String(format: "%040x", index)), history: [],
                    body: Data(body.utf8)))
        }
        _ = try await database.insertExistingRevisions(revisions)
        return seeded
    }

    static func sameJSON(_ left: Data, _ right: Data) -> Bool {
        guard let a = try? JSONSerialization.jsonObject(with: left) as? NSDictionary,
            let b = try? JSONSerialization.jsonObject(with: right) as? NSDictionary
        else { return false }
        return a == b
    }

    /// Opens the stopped gateway's database in this process and checks that every document in `expected` is there
    /// with the same revision, body and blob bytes, and that SQLite finds the file intact. The documents are read in
    /// batches, oldest change first, so that checking a million documents takes seconds, not one read each.
    static func verify(
        gatewayData: URL, expected: [(docID: String, version: Version?)], seeded: [String: Seeded]
    ) async throws -> (present: Int, integrity: [String]) {
        let store = try DocumentStore(dataDirectory: gatewayData)
        let database = try await store.database(named: "inventory", createIfMissing: false)
        defer { try? database.close() }
        let integrity = try await database.integrityCheck()
        var unchecked = Dictionary(expected.map { ($0.docID, $0.version) }, uniquingKeysWith: { _, last in last })
        var present = 0
        var sequence: Int64 = 0
        while true {
            let batch = try await database.currentDocuments(after: sequence, limit: 10_000)
            if batch.lastSequence == sequence { break }
            sequence = batch.lastSequence
            present += batch.documents.count
            for exported in batch.documents {
                let document = exported.document
                guard let version = unchecked.removeValue(forKey: document.docID) else { continue }
                // The client pushes over CBMobile_4: the version it wrote is the one stored, not a rev-tree ID.
                #expect(
                    version != nil && document.vector?.current == version,
                    "\(document.docID): \(document.vector?.current.description ?? "legacy") instead of \(version.map(\.description) ?? "legacy")"
                )
                let original = try #require(seeded[document.docID])
                #expect(
                    document.body == original.body || sameJSON(document.body, original.body),
                    "\(document.docID): body differs")
                if let digest = original.blob {
                    #expect(database.blobs.contains(digest), "\(document.docID): blob \(digest) missing")
                    if database.blobs.contains(digest) {
                        #expect(
                            BlobDigest(of: try database.blobs.read(digest)) == digest,
                            "\(document.docID): blob bytes")
                    }
                }
            }
        }
        #expect(
            unchecked.isEmpty,
            "\(unchecked.count) acknowledged documents missing, such as \(unchecked.keys.sorted().prefix(5))")
        return (present, integrity)
    }

    @Test(
        "every acknowledged revision survives SIGKILL with body and blobs; the resumed push re-sends only in-flight work"
    )
    func killDuringPush() async throws {
        let root = try reliabilityDirectory("crash-mid-sync")
        defer { try? FileManager.default.removeItem(at: root) }
        var gateway = try GatewayProcess(directory: root.appendingPathComponent("gateway"))
        let clientStore = try DocumentStore(dataDirectory: root.appendingPathComponent("client"))
        let client = try await clientStore.database(named: "client")
        defer { try? client.close() }
        let configuration = ActiveReplicator.Configuration(
            remoteURL: gateway.url, remoteUUID: Self.remoteUUID, direction: .push, batchSize: Self.batchSize,
            checkpointInterval: .milliseconds(100))
        var seeded: [String: Seeded] = [:]
        var generator = SystemRandomNumberGenerator()
        let started = ContinuousClock.now

        for round in 0..<Self.rounds {
            seeded.merge(
                try await Self.seed(first: round * Self.documentsPerRound, count: Self.documentsPerRound, in: client)
            ) { _, new in new }
            let total = seeded.count
            let killAt = Int.random(
                in: (Self.documentsPerRound / 10)...(Self.documentsPerRound * 9 / 10), using: &generator)

            // The push, killed once it has done `killAt` documents of this round.
            try await gateway.start()
            let replicator = ActiveReplicator(database: client, configuration: configuration, logger: Self.quietLogger)
            let push = Task { try await replicator.run() }
            let deadline = ContinuousClock.now + .seconds(600)
            while await replicator.status().completed < killAt, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(2))
            }
            gateway.kill()
            let firstRun = await push.result
            let completedAtKill = await replicator.status().completed
            if case .success = firstRun {
                Issue.record("round \(round): the push finished before the kill at \(killAt)")
            }

            // Acknowledged = at or below the checkpoint the client saved: it only moves past revisions the gateway
            // answered for.
            let checkpoint = try await Checkpointer.savedLocalCopy(
                in: client, checkpointID: await replicator.checkpointID(), logger: Self.quietLogger)
            let acknowledgedUpTo = Int64(checkpoint?.local ?? 0)
            let changes = try await client.changes(since: 0)
            let acknowledged = changes.filter { $0.sequence <= acknowledgedUpTo }.map {
                (docID: $0.docID, version: $0.version)
            }
            let afterKill = try await Self.verify(
                gatewayData: gateway.dataDirectory, expected: acknowledged, seeded: seeded)
            #expect(afterKill.integrity == ["ok"], "round \(round): \(afterKill.integrity)")
            #expect(afterKill.present >= acknowledged.count)

            // The resumed push: a fresh replicator, as after a restart of the client too.
            try await gateway.start()
            let resumed = ActiveReplicator(database: client, configuration: configuration, logger: Self.quietLogger)
            try await resumed.run()
            let status = await resumed.status()
            let missing = total - afterKill.present
            let proposedAgain = status.total - missing
            let beyondCheckpoint = afterKill.present - acknowledged.count
            #expect(
                proposedAgain <= beyondCheckpoint,
                "round \(round): re-proposed \(proposedAgain), only \(beyondCheckpoint) were past the checkpoint")
            #expect(proposedAgain >= 0)
            #expect(gateway.terminate() == 0, "round \(round): \(gateway.logTail())")

            let complete = try await Self.verify(
                gatewayData: gateway.dataDirectory, expected: changes.map { (docID: $0.docID, version: $0.version) },
                seeded: seeded)
            #expect(complete.integrity == ["ok"])
            #expect(complete.present == total, "round \(round): \(complete.present) of \(total) after resuming")
            print(
                "crash-mid-sync round \(round + 1)/\(Self.rounds): killed at \(completedAtKill)/\(Self.documentsPerRound) "
                    + "of this round; gateway held \(afterKill.present) of \(total), \(acknowledged.count) acknowledged "
                    + "(checkpoint), \(beyondCheckpoint) past it; resumed run proposed \(status.total), "
                    + "\(proposedAgain) of them again; integrity \(afterKill.integrity.joined())")
        }
        print(
            "crash-mid-sync: \(Self.rounds) rounds × \(Self.documentsPerRound) documents in \(ContinuousClock.now - started)"
        )
    }

    @Test("SIGKILL while the gateway downloads a blob leaves no partial blob file, and the resumed push completes it")
    func killDuringBlobDownload() async throws {
        let root = try reliabilityDirectory("crash-blob")
        defer { try? FileManager.default.removeItem(at: root) }
        var gateway = try GatewayProcess(directory: root.appendingPathComponent("gateway"))
        let clientStore = try DocumentStore(dataDirectory: root.appendingPathComponent("client"))
        let client = try await clientStore.database(named: "client")
        defer { try? client.close() }
        // 32 MiB: many getAttachment frames, so the kill lands while the gateway is writing the temporary file.
        let content = try #require(FileHandle(forReadingAtPath: "/dev/urandom")).readData(ofLength: 32 << 20)
        let digest = try client.blobs.write(content)
        let body = #"{"file":{"@type":"blob","digest":"\#(digest)","length":\#(content.count)}}"#
        _ = try await client.save("big", body: Data(body.utf8), parentRevID: nil)
        let configuration = ActiveReplicator.Configuration(
            remoteURL: gateway.url, remoteUUID: Self.remoteUUID, direction: .push)
        let blobs = gateway.dataDirectory.appendingPathComponent("databases/inventory.blobs")
        let temporary = blobs.appendingPathComponent("tmp")
        func temporaryBytes() -> Int {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: temporary.path)) ?? []
            return names.reduce(0) { total, name in
                let attributes = try? FileManager.default.attributesOfItem(
                    atPath: temporary.appendingPathComponent(name).path)
                return total + ((attributes?[.size] as? NSNumber)?.intValue ?? 0)
            }
        }

        /// Every installed blob file holds exactly the content its name promises, and a stored document's blob is
        /// installed: what getAttachment would serve is never partial.
        func checkInstalledBlobs() async throws -> Int {
            let names = ((try? FileManager.default.contentsOfDirectory(atPath: blobs.path)) ?? []).filter {
                $0.hasSuffix(".blob")
            }
            for name in names {
                let bytes = try Data(contentsOf: blobs.appendingPathComponent(name))
                let hex = Insecure.SHA1.hash(data: bytes).map { String(format: "%02x", $0) }.joined()
                #expect(name == hex + ".blob", "blob file \(name) holds other content (\(bytes.count) bytes)")
            }
            let store = try DocumentStore(dataDirectory: gateway.dataDirectory)
            let database = try await store.database(named: "inventory")
            defer { try? database.close() }
            if try await database.document("big") != nil {
                #expect(database.blobs.contains(digest), "the document is stored but its blob is not")
            }
            #expect(try await database.integrityCheck() == ["ok"])
            return names.count
        }

        // Kills at random points of the transfer: while the reply streams in, while the file is written.
        var kills: [String] = []
        for _ in 0..<Self.blobKills {
            try await gateway.start()
            let replicator = ActiveReplicator(database: client, configuration: configuration, logger: Self.quietLogger)
            let push = Task { try await replicator.run() }
            let killAfter = ContinuousClock.now + .milliseconds(Int.random(in: 100...1500))
            var partialBytes = 0
            while ContinuousClock.now < killAfter {
                partialBytes = max(partialBytes, temporaryBytes())
                try await Task.sleep(for: .milliseconds(1))
            }
            gateway.kill()
            _ = await push.result
            let installed = try await checkInstalledBlobs()
            kills.append(
                "\(partialBytes > 0 ? "\(partialBytes) bytes in the temporary file" : "no temporary file yet"), \(installed) installed"
            )
        }

        try await gateway.start()
        // A partial file is never served: the document that names it is not there until the blob is.
        try await ActiveReplicator(database: client, configuration: configuration, logger: Self.quietLogger).run()
        #expect(gateway.terminate() == 0)
        let store = try DocumentStore(dataDirectory: gateway.dataDirectory)
        let database = try await store.database(named: "inventory", createIfMissing: false)
        defer { try? database.close() }
        #expect(try await database.document("big") != nil)
        #expect(BlobDigest(of: try database.blobs.read(digest)) == digest)
        #expect(try await database.integrityCheck() == ["ok"])
        print(
            "crash-blob: \(content.count)-byte blob, kills: \(kills.joined(separator: "; ")); the resumed push completed it"
        )
    }
}
