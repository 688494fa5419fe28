import BLIPCodec
import BLIPConnection
import Crypto
import EdgeStore
import Foundation
import Logging
import ReplicationProtocol
import SyncJSON

/// The active replicator's checkpoint (spec §5): one body kept both in a local document and on the
/// peer, under an ID derived from the local database, the upstream's identity and the filter.
actor Checkpointer {
    /// Local documents holding this side's copies, apart from the passive side's `checkpoint/` ones.
    static let localDocumentPrefix = "active-checkpoint/"
    /// `setCheckpoint` attempts when other writers keep winning the compare-and-swap.
    static let maxSaveAttempts = 5

    let checkpointID: String
    /// The collection's number on a collection-aware connection; `nil` in legacy mode.
    let collectionIndex: Int?
    private let database: DocumentDatabase
    private let connection: BLIPConnection
    private let logger: Logger
    /// The local copy as found at start; `nil` when this pairing never saved one.
    private let localCopy: Checkpoint?
    private var localCopyRevision: String?
    private var peerRevision: String?
    private(set) var current = Checkpoint()
    /// What both sides hold now, so an unchanged checkpoint is not written again.
    private var lastSaved: Checkpoint?
    private var isSaving = false
    private var saveWaiters: [CheckedContinuation<Void, Never>] = []

    init(
        database: DocumentDatabase, checkpointID: String, collectionIndex: Int? = nil, connection: BLIPConnection,
        logger: Logger
    ) async throws {
        self.collectionIndex = collectionIndex
        self.database = database
        self.connection = connection
        self.logger = logger
        self.checkpointID = checkpointID
        let stored = try await database.localDocument(Self.localDocumentPrefix + checkpointID)
        localCopyRevision = stored?.revID
        localCopy = stored.flatMap { document in Self.decodeLocalCopy(document.body, logger: logger) }
    }

    /// `cp-` + base64(SHA-256(local UUID, remote identity, doc-ID filter, channel filter)). The
    /// direction is left out, as CBL 3.2.4 does for the default collection (spec §5.1), so switching
    /// between push, pull and both keeps one checkpoint. `channels` enters the digest only when
    /// set, so checkpoints saved before channel filters existed keep their IDs.
    /// A named collection enters the digest too (the default one does not, so its IDs stay as they were).
    static func checkpointID(
        localUUID: UUID, remoteUUID: String, docIDs: [String]?, channels: [String]? = nil, collection: String? = nil
    ) -> String {
        var input = JSONObject()
        if let collection {
            input["collection"] = .string(collection)
        }
        input["localUUID"] = .string(localUUID.uuidString)
        input["remoteUUID"] = .string(remoteUUID)
        input["docIDs"] = docIDs.map { .array($0.sorted().map(JSONValue.string)) } ?? .null
        if let channels {
            input["channels"] = .array(channels.sorted().map(JSONValue.string))
        }
        let digest = SHA256.hash(data: JSONValue.object(input).serialized)
        return "cp-" + Data(digest).base64EncodedString()
    }

    /// The checkpoint this side saved for `checkpointID`, read without contacting the peer.
    static func savedLocalCopy(in database: DocumentDatabase, checkpointID: String, logger: Logger) async throws
        -> Checkpoint?
    {
        try await database.localDocument(localDocumentPrefix + checkpointID).flatMap { document in
            decodeLocalCopy(document.body, logger: logger)
        }
    }

    private static func decodeLocalCopy(_ body: Data, logger: Logger) -> Checkpoint? {
        do {
            return try Checkpoint(json: Array(body))
        } catch {
            logger.warning("ignoring an unreadable local checkpoint", metadata: ["error": "\(error)"])
            return nil
        }
    }

    /// Fetches the peer's copy and settles where each direction resumes (spec §5.4).
    func reconcileWithPeer() async throws {
        settle(withPeerCopy: try await fetchPeerCopy())
    }

    /// Settles with the peer's copy as `getCollections` returned it (spec §3.1).
    func reconcile(withPeerEntry entry: GetCollectionsReply.Entry) {
        switch entry {
        case .checkpoint(let revision, let body):
            peerRevision = revision
            do {
                settle(withPeerCopy: try Checkpoint(json: JSONValue.object(body).serialized))
            } catch {
                logger.warning("ignoring the peer's unreadable checkpoint", metadata: ["error": "\(error)"])
                settle(withPeerCopy: nil)
            }
        case .noCheckpoint, .missing:
            peerRevision = nil
            settle(withPeerCopy: nil)
        }
    }

    private func settle(withPeerCopy peerCopy: Checkpoint?) {
        current = Self.reconciled(local: localCopy, peer: peerCopy)
        func withoutTime(_ checkpoint: Checkpoint?) -> Checkpoint? {
            var checkpoint = checkpoint
            checkpoint?.time = nil
            return checkpoint
        }
        lastSaved = withoutTime(localCopy) == current && withoutTime(peerCopy) == current ? current : nil
    }

    /// Spec §5.4: without either copy both directions restart from zero; the pushed sequences are
    /// those both copies say are complete; integer pull positions roll back to the smaller one, and
    /// differing non-integer ones restart the pull.
    static func reconciled(local: Checkpoint?, peer: Checkpoint?) -> Checkpoint {
        guard let local, let peer else { return Checkpoint() }
        // Holes (`localCompleted`) are not carried over: dropping them only re-proposes revisions,
        // which the peer answers with 304.
        var result = Checkpoint(local: min(local.local, peer.local))
        switch (local.remote, peer.remote) {
        case (let mine, let theirs) where mine == theirs:
            result.remote = mine
        case (.number(let mine)?, .number(let theirs)?):
            if let mine = mine.int64Value, let theirs = theirs.int64Value {
                result.remote = .number(JSONNumber(min(mine, theirs)))
            }
        default:
            result.remote = nil
        }
        return result
    }

    func setLocal(_ sequence: UInt64) {
        current.local = sequence
    }

    func setRemote(_ sequence: JSONValue) {
        current.remote = sequence
    }

    /// Saves on the peer (retrying after `409` with the peer's newer revision), then locally. Saves run one at a
    /// time, so that two of them never race each other for the peer's revision.
    func save() async throws {
        while isSaving {
            await withCheckedContinuation { saveWaiters.append($0) }
        }
        isSaving = true
        defer {
            isSaving = false
            let waiters = saveWaiters
            saveWaiters.removeAll()
            for waiter in waiters { waiter.resume() }
        }
        try await saveNow()
    }

    private func saveNow() async throws {
        var checkpoint = current
        checkpoint.time = nil
        guard checkpoint != lastSaved else { return }
        checkpoint.time = Int(Date().timeIntervalSince1970)
        let body = checkpoint.json
        for attempt in 1...Self.maxSaveAttempts {
            let request = SetCheckpointRequest(
                client: checkpointID, revision: peerRevision, body: body, collection: collectionIndex)
            do {
                let reply = try await connection.sendRequest(.request(request))
                let decoded = try reply.decodeReply(SetCheckpointReply.self, to: "setCheckpoint")
                peerRevision = decoded.revision
                break
            } catch let error as BLIPErrorReply where error.domain == ErrorDomain.http.rawValue && error.code == 409 {
                guard attempt < Self.maxSaveAttempts else {
                    throw ActiveReplicatorError.peerRefused(
                        request: "setCheckpoint", domain: error.domain, code: error.code, message: error.message)
                }
                _ = try await fetchPeerCopy()
            }
        }
        try await saveLocalCopy(body)
        checkpoint.time = nil
        lastSaved = checkpoint
    }

    private func saveLocalCopy(_ body: [UInt8]) async throws {
        let docID = Self.localDocumentPrefix + checkpointID
        do {
            localCopyRevision = try await database.putLocalDocument(
                docID, body: Data(body), expectedRevID: localCopyRevision)
        } catch StoreError.localRevisionMismatch(_, _, let actual) {
            // Another run of the same pairing wrote in between; this save is the newer one.
            localCopyRevision = try await database.putLocalDocument(docID, body: Data(body), expectedRevID: actual)
        }
    }

    /// The peer's copy and its revision; `nil` (and no revision) when it has none.
    private func fetchPeerCopy() async throws -> Checkpoint? {
        do {
            let reply = try await connection.sendRequest(
                .request(GetCheckpointRequest(client: checkpointID, collection: collectionIndex)))
            let decoded = try reply.decodeReply(GetCheckpointReply.self, to: "getCheckpoint")
            peerRevision = decoded.revision
            do {
                return try decoded.checkpoint()
            } catch {
                logger.warning("ignoring the peer's unreadable checkpoint", metadata: ["error": "\(error)"])
                return nil
            }
        } catch let error as BLIPErrorReply where error.domain == ErrorDomain.http.rawValue && error.code == 404 {
            peerRevision = nil
            return nil
        }
    }
}

extension BLIPMessage {
    /// Decodes a reply this side asked for; a malformed one is an `ActiveReplicatorError`.
    func decodeReply<Message: ReplicationMessage>(_ type: Message.Type, to request: String)
        throws(ActiveReplicatorError)
        -> Message
    {
        do {
            return try Message(properties: MessageProperties(properties.pairs), body: body)
        } catch {
            throw .invalidReply(request: request, reason: "\(error)")
        }
    }
}
