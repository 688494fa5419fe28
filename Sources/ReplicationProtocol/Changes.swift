import SyncIdentifiers
import SyncJSON

/// The 4th item of a `changes` row (spec §3.5): CBMobile_3 writes an integer bit-mask, CBMobile_2
/// and older code paths a JSON boolean (read as `deleted`).
package struct ChangeFlags: OptionSet, Sendable, Hashable {
    package let rawValue: Int
    package init(rawValue: Int) { self.rawValue = rawValue }

    package static let deleted = ChangeFlags(rawValue: 1)
    package static let revoked = ChangeFlags(rawValue: 2)
    package static let removed = ChangeFlags(rawValue: 4)

    /// Whether the row offers a revision to fetch. LiteCore treats 0, 1 and 5 (a tombstone that
    /// also left the channel) as revisions and every other value as "purge locally, no `rev`
    /// follows".
    package var offersRevision: Bool {
        rawValue <= 1 || rawValue == 5
    }
}

/// One `changes` row: `[sequence, docID, revision, flags?, bodySize?]`. CBMobile_3 names the revision by rev-tree
/// ID; CBMobile_4 by its current version alone, and leaves the body size out for a tombstone.
package struct ChangeRow: Sendable, Hashable {
    /// The sender's sequence, opaque JSON (an integer from LiteCore, possibly a string from SG).
    package var sequence: JSONValue
    package var docID: String
    package var revision: WireRevision
    package var flags: ChangeFlags
    /// Approximate body size, for progress only.
    package var bodySize: Int?

    package init(
        sequence: JSONValue, docID: String, revision: WireRevision, flags: ChangeFlags = [], bodySize: Int? = nil
    ) {
        self.sequence = sequence
        self.docID = docID
        self.revision = revision
        self.flags = flags
        self.bodySize = bodySize
    }

    package init(
        sequence: JSONValue, docID: String, revisionID: RevisionID, flags: ChangeFlags = [], bodySize: Int? = nil
    ) {
        self.init(sequence: sequence, docID: docID, revision: .tree(revisionID), flags: flags, bodySize: bodySize)
    }

    init(_ value: JSONValue, index: Int) throws(ProtocolError) {
        let context = "changes"
        guard let items = value.arrayValue, (3...5).contains(items.count) else {
            throw .invalidRow(
                context: context, index: index, reason: "expected [sequence, docID, revID, deleted?, bodySize?]")
        }
        guard !items[0].isNull else {
            throw .invalidRow(context: context, index: index, reason: "the sequence is null")
        }
        sequence = items[0]
        guard let docID = items[1].stringValue else {
            throw .invalidRow(context: context, index: index, reason: "the docID is not a string")
        }
        if let problem = DocumentID.problem(docID) {
            throw .invalidRow(context: context, index: index, reason: problem)
        }
        self.docID = docID
        guard let revText = items[2].stringValue else {
            throw .invalidRow(
                context: context, index: index, reason: "the revision is not a string (a revID or a version vector)")
        }
        revision = try WireRevision(received: revText)
        flags = []
        if items.count >= 4 {
            switch items[3] {
            case .bool(let deleted): flags = deleted ? .deleted : []
            case .number(let number):
                guard let mask = number.intValue, mask >= 0 else {
                    throw .invalidRow(
                        context: context, index: index, reason: "the deleted flags are not a non-negative integer")
                }
                flags = ChangeFlags(rawValue: mask)
            default:
                throw .invalidRow(
                    context: context, index: index, reason: "the deleted flag is not a boolean or integer")
            }
        }
        if items.count == 5 {
            guard let size = items[4].intValue, size >= 0 else {
                throw .invalidRow(context: context, index: index, reason: "the body size is not a non-negative integer")
            }
            bodySize = size
        }
    }

    /// As LiteCore writes it: the flags as an integer, present whenever a body size follows.
    var json: JSONValue {
        var items: [JSONValue] = [sequence, .string(docID), .string(revision.description)]
        if bodySize != nil || !flags.isEmpty {
            items.append(.integer(flags.rawValue))
        }
        if let bodySize {
            items.append(.integer(bodySize))
        }
        return .array(items)
    }
}

/// `changes` (spec §3.5): the pusher offers revisions, oldest first. An empty list means "caught up".
package struct ChangesRequest: ReplicationRequest, Hashable {
    package static let profile = Profile.changes

    package var rows: [ChangeRow]
    package var collection: Int?

    package init(rows: [ChangeRow], collection: Int? = nil) {
        self.rows = rows
        self.collection = collection
    }

    /// The caught-up marker; LiteCore sends it noReply with body `[]`.
    package var isCaughtUp: Bool { rows.isEmpty }

    /// Accepts `[]`, `null` (Sync Gateway) and an empty body as "caught up".
    package init(properties: MessageProperties, body: [UInt8]) throws(ProtocolError) {
        try properties.expectProfile(Self.profile)
        collection = try properties.collectionIndex(in: Self.profile)
        var rows: [ChangeRow] = []
        for (index, item) in try MessageBody.list(body, context: "changes body").enumerated() {
            rows.append(try ChangeRow(item, index: index))
        }
        self.rows = rows
    }

    package func encode() -> (properties: MessageProperties, body: [UInt8]) {
        (Self.startProperties(collection: collection), JSONValue.array(rows.map(\.json)).serialized)
    }
}

/// The reply to `changes`: per row, whether and how the receiver wants the revision.
package struct ChangesReply: ReplicationMessage, Hashable {
    package enum Entry: Sendable, Hashable {
        /// "Send it"; the revisions the receiver has that may be ancestors, current first. The
        /// first one is what the sender may use as `deltaSrc`. Empty = "I have nothing". A CBMobile_4
        /// receiver lists every version of its vector, each on its own.
        case send(knownAncestors: [WireRevision])
        /// `0` or `null`: "don't send".
        case skip
        /// A non-zero status such as 409 (conflict).
        case status(Int)
    }

    package var entries: [Entry]
    package var capabilities: ReceiverCapabilities

    package init(entries: [Entry], capabilities: ReceiverCapabilities = ReceiverCapabilities()) {
        self.entries = entries
        self.capabilities = capabilities
    }

    /// The answer for row `index`; rows past the end were trailing "don't send"s left out.
    package func entry(at index: Int) -> Entry {
        entries.indices.contains(index) ? entries[index] : .skip
    }

    package init(properties: MessageProperties, body: [UInt8]) throws(ProtocolError) {
        capabilities = try ReceiverCapabilities(properties: properties)
        let context = "changes reply"
        var entries: [Entry] = []
        for (index, item) in try MessageBody.list(body, context: context).enumerated() {
            switch item {
            case .null:
                entries.append(.skip)
            case .number(let number):
                guard let status = number.intValue else {
                    throw .invalidRow(context: context, index: index, reason: "\(number) is not an integer status")
                }
                entries.append(status == 0 ? .skip : .status(status))
            case .array(let revisions):
                var known: [WireRevision] = []
                for revision in revisions {
                    guard let text = revision.stringValue else {
                        throw .invalidRow(context: context, index: index, reason: "known revisions must be strings")
                    }
                    known.append(try WireRevision(received: text))
                }
                entries.append(.send(knownAncestors: known))
            default:
                throw .invalidRow(
                    context: context,
                    index: index,
                    reason: "expected an array of revIDs, 0, null or a status, got \(item.typeName)"
                )
            }
        }
        self.entries = entries
    }

    /// Trailing "don't send" entries are left out, as LiteCore does (so `[]` declines everything).
    package func encode() -> (properties: MessageProperties, body: [UInt8]) {
        var items: [JSONValue] = entries.map { entry in
            switch entry {
            case .send(let known): .array(known.map { .string($0.description) })
            case .skip: .integer(0)
            case .status(let status): .integer(status)
            }
        }
        while items.last == .integer(0) {
            items.removeLast()
        }
        return (capabilities.properties, JSONValue.array(items).serialized)
    }
}
