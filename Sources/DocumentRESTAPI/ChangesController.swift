import EdgeStore
import Foundation
import Hummingbird
import NIOCore
import ReplicationProtocol
import SyncJSON

/// `GET /{keyspace}/_changes`: `feed=normal|longpoll|continuous`. Longpoll and continuous feeds wait on the
/// store's commit notifications (`ChangeFeed`), so a write wakes them at once and an idle feed costs nothing.
struct ChangesController: Sendable {
    let api: DocumentRESTAPI

    /// Sync Gateway's default longpoll and continuous timeout.
    static let defaultTimeout = Duration.milliseconds(300_000)
    /// Below this, heartbeats would be most of the traffic; Sync Gateway has the same floor.
    static let minimumHeartbeat = 25

    func addRoutes(to router: Router<BasicRequestContext>) {
        router.get("/{keyspace}/_changes") { request, context in
            await api.rest(request, context, writes: false) { call in try await changes(call) }
        }
    }

    private enum Feed: String {
        case normal, longpoll, continuous
    }

    /// How `changes` entries name revisions: by rev-tree ID, or (`version_type=cv`, as Sync Gateway 4) by current
    /// version, falling back to the rev-tree ID for a revision that has none.
    private enum VersionType: String {
        case rev, cv
    }

    private struct Parameters: Sendable {
        var versionType: VersionType
        var since: Int64
        var limit: Int
        var includeDocs: Bool
        var options: ChangesOptions
        var heartbeat: Duration?
        var timeout: Duration
    }

    private func changesParameters(_ call: RESTCall) throws(RESTError) -> Parameters {
        var since: Int64 = 0
        if let text = call.queryString("since") {
            let unquoted = text.trimmingCharacters(in: CharacterSet(charactersIn: "\""))
            guard let value = Int64(unquoted), value >= 0 else {
                throw .badRequest("since must be a sequence number, got '\(text)'")
            }
            since = value
        }
        var options = ChangesOptions(activeOnly: try call.queryFlag("active_only"))
        if let docIDs = try call.queryJSON("doc_ids") {
            guard let list = docIDs.arrayValue, list.allSatisfy({ $0.stringValue != nil }) else {
                throw .badRequest("doc_ids must be a JSON array of document IDs")
            }
            options.docIDs = Set(list.compactMap(\.stringValue))
        }
        let heartbeat = try call.queryInteger("heartbeat").map { milliseconds throws(RESTError) in
            guard milliseconds >= Self.minimumHeartbeat else {
                throw .badRequest("heartbeat must be at least \(Self.minimumHeartbeat) ms, got \(milliseconds)")
            }
            return Duration.milliseconds(milliseconds)
        }
        let versionTypeText = call.queryString("version_type") ?? "rev"
        guard let versionType = VersionType(rawValue: versionTypeText) else {
            throw .badRequest("version_type must be rev or cv, got '\(versionTypeText)'")
        }
        return Parameters(
            versionType: versionType,
            since: since,
            limit: try call.queryInteger("limit", range: 1...Int.max) ?? .max,
            includeDocs: try call.queryFlag("include_docs"),
            options: options,
            heartbeat: heartbeat,
            timeout: try call.queryInteger("timeout").map { .milliseconds($0) } ?? Self.defaultTimeout)
    }

    private func changes(_ call: RESTCall) async throws -> Response {
        let feedText = call.queryString("feed") ?? "normal"
        guard let feed = Feed(rawValue: feedText) else {
            throw RESTError.badRequest("feed must be normal, longpoll or continuous, got '\(feedText)'")
        }
        let parameters = try changesParameters(call)
        let keyspace = call.keyspace
        if try await !keyspace.database.hasCollection(keyspace.collection) {
            try await keyspace.database.createCollection(keyspace.collection)
        }
        let changeFeed = keyspace.database.changeFeed(
            in: keyspace.collection, since: parameters.since, batchSize: min(parameters.limit, 500),
            options: parameters.options)
        switch feed {
        case .normal, .longpoll:
            var iterator = changeFeed.makeAsyncIterator()
            var results: [JSONValue] = []
            var lastSequence = parameters.since
            while results.count < parameters.limit, let batch = try await iterator.nextCommitted() {
                for change in batch.prefix(parameters.limit - results.count) {
                    results.append(try await Self.entry(change, parameters, keyspace))
                    lastSequence = change.sequence
                }
            }
            if feed == .longpoll, results.isEmpty,
                await Self.waitForCommit(iterator, upTo: parameters.timeout),
                let batch = try await iterator.nextCommitted()
            {
                for change in batch.prefix(parameters.limit) {
                    results.append(try await Self.entry(change, parameters, keyspace))
                    lastSequence = change.sequence
                }
            }
            return DocumentRESTAPI.json(["results": .array(results), "last_seq": .integer(Int(lastSequence))])
        case .continuous:
            let body = ResponseBody { writer in
                try await Self.stream(changeFeed, parameters: parameters, keyspace: keyspace, to: &writer)
            }
            return Response(status: .ok, headers: [.contentType: "application/json"], body: body)
        }
    }

    /// One line per change; a newline per heartbeat; without heartbeats the feed ends after `timeout` of
    /// quiet, and always once `limit` changes were sent, with a final `{"last_seq": …}` line.
    private static func stream(
        _ changeFeed: ChangeFeed, parameters: Parameters, keyspace: RESTKeyspace,
        to writer: inout any ResponseBodyWriter
    ) async throws {
        var iterator = changeFeed.makeAsyncIterator()
        var sent = 0
        var lastSequence = parameters.since
        feed: while !Task.isCancelled {
            while let batch = try await iterator.nextCommitted() {
                for change in batch {
                    let line = try await entry(change, parameters, keyspace)
                    try await writer.write(ByteBuffer(bytes: line.serialized + [UInt8(ascii: "\n")]))
                    lastSequence = change.sequence
                    sent += 1
                    if sent >= parameters.limit { break feed }
                }
            }
            if let heartbeat = parameters.heartbeat {
                if await !waitForCommit(iterator, upTo: heartbeat) {
                    try await writer.write(ByteBuffer(string: "\n"))
                }
            } else if await !waitForCommit(iterator, upTo: parameters.timeout) {
                break
            }
        }
        let last: JSONValue = ["last_seq": .integer(Int(lastSequence))]
        try await writer.write(ByteBuffer(bytes: last.serialized + [UInt8(ascii: "\n")]))
        try await writer.finish(nil)
    }

    /// Waits until a write commits after the iterator last looked, or `duration` passes: true for a commit.
    private static func waitForCommit(_ iterator: ChangeFeed.AsyncIterator, upTo duration: Duration) async -> Bool {
        await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                await iterator.waitForCommit()
                return !Task.isCancelled
            }
            group.addTask {
                try? await Task.sleep(for: duration)
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
    }

    private static func entry(_ change: Change, _ parameters: Parameters, _ keyspace: RESTKeyspace) async throws
        -> JSONValue
    {
        let revision =
            switch parameters.versionType {
            case .rev: change.revID.description
            case .cv: change.version?.description ?? change.revID.description
            }
        var entry: JSONObject = [
            "seq": .integer(Int(change.sequence)),
            "id": .string(change.docID),
            "changes": [["rev": .string(revision)]],
        ]
        if change.deleted { entry["deleted"] = true }
        if parameters.includeDocs,
            let revision = try await keyspace.database.revision(
                change.docID, revID: change.revID, in: keyspace.collection),
            let body = revision.body
        {
            entry["doc"] = .object(
                try RESTDocuments.documentObject(
                    docID: change.docID, revID: change.revID, version: change.version, deleted: change.deleted,
                    body: body))
        }
        return .object(entry)
    }
}
