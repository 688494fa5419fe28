import EdgeGatewayTestSupport
import EdgeStore
import Foundation
import GatewayConfigurationFile
import SyncIdentifiers
import Testing

/// An edge gateway (namespace A) replicating continuously, push and pull, with a hub gateway (namespace B) over a
/// link that `BadNetworkLab` makes slow, lossy and reordering, or cuts. Both gateways are child processes of the
/// built binary, each in its own namespace; the test writes into each one's store directly (the gateway notices
/// other processes' commits within a second) and reads their /health from inside their namespaces.
@Suite("Bad network: a lossy, reordering link and a cut link between two gateways", .serialized)
struct BadNetworkTests {
    /// Updates in all, half written on each side.
    static let updates = ReliabilityScale.integer("RELIABILITY_NETWORK_UPDATES", default: 1_000)
    /// How long the writers take for them.
    static let trafficSeconds = ReliabilityScale.integer("RELIABILITY_NETWORK_TRAFFIC_SECONDS", default: 20)
    static let cutSeconds = ReliabilityScale.integer("RELIABILITY_NETWORK_CUT_SECONDS", default: 10)
    /// The listener's and the upstream's heartbeat in the link-cut test.
    static let heartbeatSeconds = ReliabilityScale.integer("RELIABILITY_NETWORK_HEARTBEAT_SECONDS", default: 2)
    /// Updates per document: each document gets a chain of this many revisions.
    static let updatesPerDocument = 10
    /// How long stores may take to agree once the writers stop.
    static let convergenceTimeout = Duration.seconds(max(300, updates / 10))

    /// The edge and the hub in their namespaces, and a view of each one's store.
    struct Pair {
        var edge: GatewayProcess
        var hub: GatewayProcess
        let edgeDatabase: DocumentDatabase
        let hubDatabase: DocumentDatabase

        func stop() {
            var edge = edge
            var hub = hub
            _ = edge.terminate()
            _ = hub.terminate()
            try? edgeDatabase.close()
            try? hubDatabase.close()
        }
    }

    static func startPair(in lab: BadNetworkLab, heartbeat: String) async throws -> Pair {
        var hub = try GatewayProcess(
            directory: lab.root.appendingPathComponent("hub"),
            network: .init(namespace: lab.b.namespace, address: lab.b.address)
        ) { $0.listeners[0]["heartbeat"] = .string(heartbeat) }
        try await hub.start()
        var edge = try GatewayProcess(
            directory: lab.root.appendingPathComponent("edge"),
            network: .init(namespace: lab.a.namespace, address: lab.a.address)
        ) {
            var upstream = GatewayTOML.upstream(url: hub.url)
            upstream["heartbeat"] = .string(heartbeat)
            upstream["max_attempt_wait"] = "30s"
            $0.upstreams = [upstream]
        }
        do {
            try await edge.start()
        } catch {
            _ = hub.terminate()
            throw error
        }
        do {
            let edgeDatabase = try await DocumentStore(dataDirectory: edge.dataDirectory).database(named: "inventory")
            let hubDatabase = try await DocumentStore(dataDirectory: hub.dataDirectory).database(named: "inventory")
            return Pair(edge: edge, hub: hub, edgeDatabase: edgeDatabase, hubDatabase: hubDatabase)
        } catch {
            _ = edge.terminate()
            _ = hub.terminate()
            throw error
        }
    }

    /// Writes `documents` documents of `prefix`, each updated `updatesPerDocument` times on top of its current
    /// revision, round after round, spread evenly over `duration`; returns the document IDs.
    static func writeUpdates(
        _ database: DocumentDatabase, prefix: String, documents: Int, over duration: Duration
    ) async throws -> [String] {
        let docIDs = (0..<documents).map { "\(prefix)-\($0)" }
        var current = [RevisionID?](repeating: nil, count: documents)
        let pause = duration / (documents * updatesPerDocument)
        for round in 1...updatesPerDocument {
            for (index, docID) in docIDs.enumerated() {
                let body = Data(#"{"writer":"\#(prefix)","update":\#(round)}"#.utf8)
                current[index] = try await database.save(docID, body: body, parentRevID: current[index]).revID
                try await Task.sleep(for: pause)
            }
        }
        return docIDs
    }

    /// Why the two stores differ on `docIDs`, or nil when every document has the same current version (the
    /// gateways replicate over CBMobile_4, which keeps versions, not rev-tree IDs, identical), holding the last
    /// update written, on both.
    static func divergence(_ pair: Pair, _ docIDs: [String]) async throws -> String? {
        for docID in docIDs {
            let onEdge = try await pair.edgeDatabase.document(docID)
            let onHub = try await pair.hubDatabase.document(docID)
            guard let onEdge, let onHub, let version = onEdge.vector?.current, onHub.vector?.current == version,
                onEdge.body == onHub.body, Self.update(in: onEdge.body) == updatesPerDocument
            else {
                let edgeVersion = onEdge?.vector?.current.description ?? "missing"
                return "\(docID): edge \(edgeVersion), hub \(onHub?.vector?.current.description ?? "missing")"
            }
        }
        return nil
    }

    /// The `update` number a body of `writeUpdates` carries.
    static func update(in body: Data) -> Int? {
        (try? JSONSerialization.jsonObject(with: body) as? [String: Any])?["update"] as? Int
    }

    /// Waits until the stores agree on `docIDs`; returns how long that took.
    static func awaitConvergence(_ pair: Pair, _ docIDs: [String], timeout: Duration) async throws -> Duration {
        let start = ContinuousClock.now
        var last: String?
        while ContinuousClock.now - start < timeout {
            last = try await divergence(pair, docIDs)
            if last == nil { return ContinuousClock.now - start }
            try await Task.sleep(for: .milliseconds(500))
        }
        throw ReliabilityFailure("no convergence within \(timeout): \(last ?? "")")
    }

    /// Every document has one leaf on both sides, with the same current version and body, so no revision was
    /// stored as a conflicting branch; and neither side has documents the other lacks.
    static func expectIdenticalWithoutDuplicates(_ pair: Pair, _ docIDs: [String]) async throws {
        for docID in docIDs {
            let onEdge = try #require(try await pair.edgeDatabase.document(docID))
            let onHub = try #require(try await pair.hubDatabase.document(docID))
            let edgeLeaves = try await pair.edgeDatabase.leafRevisions(docID)
            let hubLeaves = try await pair.hubDatabase.leafRevisions(docID)
            #expect(edgeLeaves.count == 1 && hubLeaves.count == 1, "\(docID): leaves \(edgeLeaves) / \(hubLeaves)")
            #expect(onEdge.vector?.current != nil && onEdge.vector?.current == onHub.vector?.current, "\(docID)")
            #expect(onEdge.body == onHub.body, "\(docID): bodies differ")
            #expect(Self.update(in: onEdge.body) == updatesPerDocument, "\(docID): not the last update")
        }
        #expect(try await pair.edgeDatabase.documentCount() == docIDs.count)
        #expect(try await pair.hubDatabase.documentCount() == docIDs.count)
        #expect(try await pair.edgeDatabase.integrityCheck() == ["ok"])
        #expect(try await pair.hubDatabase.integrityCheck() == ["ok"])
    }

    /// Lines of a gateway's log that contain `text`.
    static func logLines(_ gateway: GatewayProcess, containing text: String) -> [String] {
        let log = (try? String(contentsOfFile: gateway.logPath, encoding: .utf8)) ?? ""
        return log.split(separator: "\n").filter { $0.contains(text) }.map(String.init)
    }

    /// The time stamp of the first of `lines` logged at or after `date`; lines read `time=<ISO 8601> …`.
    static func firstLogTime(_ lines: [String], after date: Date) -> Date? {
        let format = ISO8601DateFormatter()
        format.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return
            lines.compactMap { line -> Date? in
                guard let stamp = line.split(separator: " ").first(where: { $0.hasPrefix("time=") }) else { return nil }
                return format.date(from: String(stamp.dropFirst("time=".count)))
            }
            .filter { $0 >= date }.min()
    }

    /// The health components of one kind, from a gateway's /health.
    static func components(_ gateway: GatewayProcess, kind: String) async throws -> [[String: Any]] {
        let health = try await gateway.health()
        let object = try JSONSerialization.jsonObject(with: Data(health.utf8)) as? [String: Any]
        return (object?["components"] as? [[String: Any]] ?? []).filter { ($0["kind"] as? String) == kind }
    }

    @Test(
        "continuous push and pull both ways over a link with 200 ms delay, 25 % reordering and 10 % loss each way converge to identical stores without duplicate revisions",
        .enabled(if: BadNetworkLab.unavailableReason == nil, "SKIPPED: \(BadNetworkLab.unavailableReason ?? "")"))
    func lossyLinkConverges() async throws {
        let impairment = BadNetworkLab.Impairment(delayMilliseconds: 200, reorderPercent: 25, lossPercent: 10)
        let lab = try BadNetworkLab(impairment: impairment)
        defer { lab.tearDown() }
        // Pings every 10 s: a retransmission under 10 % loss can hold one back for seconds, which is a slow
        // link, not a dead one.
        let pair = try await Self.startPair(in: lab, heartbeat: "10s")
        defer { pair.stop() }

        let documentsPerSide = Self.updates / 2 / Self.updatesPerDocument
        let traffic = Duration.seconds(Self.trafficSeconds)
        let started = ContinuousClock.now
        async let edgeIDs = Self.writeUpdates(
            pair.edgeDatabase, prefix: "edge", documents: documentsPerSide, over: traffic)
        async let hubIDs = Self.writeUpdates(
            pair.hubDatabase, prefix: "hub", documents: documentsPerSide, over: traffic)
        let docIDs = try await edgeIDs + hubIDs
        let written = ContinuousClock.now - started
        let convergence = try await Self.awaitConvergence(pair, docIDs, timeout: Self.convergenceTimeout)
        try await Self.expectIdenticalWithoutDuplicates(pair, docIDs)

        let retries = Self.logLines(pair.edge, containing: "upstream replication failed; retrying").count
        let heartbeatCloses =
            Self.logLines(pair.edge, containing: "did not answer a ping").count
            + Self.logLines(pair.hub, containing: "did not answer a ping").count
        // Each side writes only its own documents, so a conflicting proposal is a revision pulled from the hub and
        // proposed back after the hub had moved on. Reported, not asserted: the pusher skips a pulled revision only
        // while it is the one recorded for the hub, and a newer pull landing between the pusher's read of its
        // batch and its check of the record still lets the older one through (PulledRevisionEchoTests asserts the
        // echo itself, deterministically).
        let conflicts = Self.logLines(pair.edge, containing: "the upstream has a conflicting revision").count
        print(
            "bad network (\(impairment)): \(Self.updates) updates on \(docIDs.count) documents written in \(written), "
                + "converged \(convergence) after the last write; upstream reconnections: \(retries), "
                + "connections closed by the heartbeat: \(heartbeatCloses), conflicting proposals: \(conflicts)")
    }

    @Test(
        "a cut link is noticed within two heartbeats on the listener and the upstream side; the upstream goes offline, backs off and converges after",
        .enabled(if: BadNetworkLab.unavailableReason == nil, "SKIPPED: \(BadNetworkLab.unavailableReason ?? "")"))
    func cutLinkIsDetectedAndHealed() async throws {
        let lab = try BadNetworkLab(impairment: .clean)
        defer { lab.tearDown() }
        let heartbeat = Duration.seconds(Self.heartbeatSeconds)
        let pair = try await Self.startPair(in: lab, heartbeat: "\(Self.heartbeatSeconds)s")
        defer { pair.stop() }

        // Writes on both sides all along: before, during and after the cut.
        let documentsPerSide = Self.updates / 2 / Self.updatesPerDocument
        let traffic = Duration.seconds(Self.cutSeconds + 20)
        let (edgeDatabase, hubDatabase) = (pair.edgeDatabase, pair.hubDatabase)
        let edgeWriter = Task {
            try await Self.writeUpdates(edgeDatabase, prefix: "edge", documents: documentsPerSide, over: traffic)
        }
        let hubWriter = Task {
            try await Self.writeUpdates(hubDatabase, prefix: "hub", documents: documentsPerSide, over: traffic)
        }
        defer {
            edgeWriter.cancel()
            hubWriter.cancel()
        }
        try await DiskFullTests.eventually("the edge connected to the hub", timeout: .seconds(60)) {
            let listener = try await Self.components(pair.hub, kind: "listener").first
            return ((listener?["details"] as? [String: Any])?["activeConnections"] as? Int) == 1
        }
        try await Task.sleep(for: .seconds(3))

        let cutAt = ContinuousClock.now
        let cutDate = Date()
        try lab.cut()
        var listenerDetection: Duration?
        var upstreamDetection: Duration?
        var upstreamStates: [String] = []
        while ContinuousClock.now - cutAt < .seconds(Self.cutSeconds) {
            let elapsed = ContinuousClock.now - cutAt
            if listenerDetection == nil {
                let listener = try await Self.components(pair.hub, kind: "listener").first
                if ((listener?["details"] as? [String: Any])?["activeConnections"] as? Int) == 0 {
                    listenerDetection = elapsed
                }
            }
            if let upstream = try await Self.components(pair.edge, kind: "upstream").first {
                let activity = (upstream["details"] as? [String: Any])?["activity"] as? String ?? "?"
                let state = "\(upstream["status"] as? String ?? "?")/\(activity)"
                if upstreamStates.last != state { upstreamStates.append(state) }
                if upstreamDetection == nil, activity == "offline" { upstreamDetection = elapsed }
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        let restoredAt = ContinuousClock.now
        try lab.restore()

        // When each side noticed is read from its own log line, stamped as it closed the connection: the polls
        // above go through /health in another namespace and, with the other reliability suites loading both
        // cores, can lag the close by seconds (a CI run saw the count drop 2.7 s after the hub's logged close).
        // The polls still have to see the connection gone and the upstream offline before the link returns.
        let limit = heartbeat * 2 + .milliseconds(1_500)
        let listenerSeen = try #require(listenerDetection, "the hub never dropped the dead connection during the cut")
        let upstreamSeen = try #require(upstreamDetection, "the edge's upstream never went offline during the cut")
        let heartbeatClose = "did not answer a ping"
        let hubHeartbeatLines = Self.logLines(pair.hub, containing: heartbeatClose)
        let edgeHeartbeatLines = Self.logLines(pair.edge, containing: heartbeatClose)
        let listenerClosed = try #require(
            Self.firstLogTime(hubHeartbeatLines, after: cutDate).map { $0.timeIntervalSince(cutDate) },
            "the hub's log does not say why the connection was closed")
        let upstreamClosed = try #require(
            Self.firstLogTime(edgeHeartbeatLines, after: cutDate).map { $0.timeIntervalSince(cutDate) },
            "the edge's log does not say why the connection was closed")
        #expect(.seconds(listenerClosed) <= limit, "listener closed after \(listenerClosed) s")
        #expect(.seconds(upstreamClosed) <= limit, "upstream closed after \(upstreamClosed) s")
        let retries = Self.logLines(pair.edge, containing: "upstream replication failed; retrying").map { line in
            line.split(separator: " ").filter { $0.hasPrefix("attempt=") || $0.hasPrefix("retryIn=") }
                .joined(separator: " ")
        }
        #expect(!retries.isEmpty, "the upstream did not back off")
        // Offline from the moment it noticed until the link came back: failed reconnections do not read as "up".
        let sinceOffline = upstreamStates.drop { $0 != "degraded/offline" }
        #expect(!sinceOffline.contains { $0.hasPrefix("up/") }, "health during the cut: \(upstreamStates)")

        let docIDs = try await edgeWriter.value + hubWriter.value
        let convergence = try await Self.awaitConvergence(pair, docIDs, timeout: Self.convergenceTimeout)
        let healed = ContinuousClock.now - restoredAt
        try await Self.expectIdenticalWithoutDuplicates(pair, docIDs)
        print(
            "link cut at \(cutDate) for \(Self.cutSeconds) s, heartbeat \(heartbeat): the hub closed the dead "
                + "connection \(listenerClosed) s after the cut, the edge \(upstreamClosed) s; polled: listener count 0 "
                + "after \(listenerSeen), upstream offline after \(upstreamSeen); upstream states during "
                + "the cut: \(upstreamStates.joined(separator: " → ")); retries: "
                + retries.joined(separator: "; ")
                + "; converged \(convergence) after the last write, \(healed) after the link came back; "
                + "\(Self.updates) updates on \(docIDs.count) documents")
        print("hub: \(hubHeartbeatLines.joined(separator: "\n"))\nedge: \(edgeHeartbeatLines.joined(separator: "\n"))")

        // A second outage after a connection that synced: the back-off starts over at the first attempt.
        let retriesBefore = Self.logLines(pair.edge, containing: "upstream replication failed; retrying").count
        try lab.cut()
        try await DiskFullTests.eventually("the second outage to be noticed", timeout: heartbeat * 2 + .seconds(10)) {
            Self.logLines(pair.edge, containing: "upstream replication failed; retrying").count > retriesBefore
        }
        try lab.restore()
        let firstRetry = Self.logLines(pair.edge, containing: "upstream replication failed; retrying")[retriesBefore]
        #expect(firstRetry.contains(" attempt=1 "), "\(firstRetry)")
        try await DiskFullTests.eventually("the upstream to be up again", timeout: .seconds(60)) {
            let upstream = try await Self.components(pair.edge, kind: "upstream").first
            return upstream?["status"] as? String == "up"
        }
    }
}
