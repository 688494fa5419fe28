import SyncIdentifiers
import SyncJSON

/// One `proposeChanges` row: `[docID, revision, remoteRevision?, bodySize?]` (spec §3.6). CBMobile_3 names the
/// revisions by rev-tree ID. CBMobile_4 sends the document's whole vector and the receiver's version it last saw,
/// and leaves the body size out for a tombstone.
package struct ProposedChange: Sendable, Hashable {
    package var docID: String
    package var revision: WireRevision
    /// The revision the sender believes is current on the receiver; `nil` when unknown (`""` on the wire).
    package var remoteRevision: WireRevision?
    package var bodySize: Int?

    package init(
        docID: String, revision: WireRevision, remoteRevision: WireRevision? = nil, bodySize: Int? = nil
    ) {
        self.docID = docID
        self.revision = revision
        self.remoteRevision = remoteRevision
        self.bodySize = bodySize
    }

    package init(
        docID: String, revisionID: RevisionID, remoteRevisionID: RevisionID? = nil, bodySize: Int? = nil
    ) {
        self.init(
            docID: docID, revision: .tree(revisionID), remoteRevision: remoteRevisionID.map(WireRevision.tree),
            bodySize: bodySize)
    }

    init(_ value: JSONValue, index: Int) throws(ProtocolError) {
        let context = "proposeChanges"
        guard let items = value.arrayValue, (2...4).contains(items.count) else {
            throw .invalidRow(
                context: context, index: index, reason: "expected [docID, revID, remoteRevID?, bodySize?]")
        }
        guard let docID = items[0].stringValue else {
            throw .invalidRow(context: context, index: index, reason: "the docID is not a string")
        }
        if let problem = DocumentID.problem(docID) {
            throw .invalidRow(context: context, index: index, reason: problem)
        }
        self.docID = docID
        guard let revText = items[1].stringValue else {
            throw .invalidRow(
                context: context, index: index, reason: "the revision is not a string (a revID or a version vector)")
        }
        revision = try WireRevision(received: revText)
        if items.count >= 3 {
            switch items[2] {
            case .null: remoteRevision = nil
            case .string(let text): remoteRevision = text.isEmpty ? nil : try WireRevision(received: text)
            default: throw .invalidRow(context: context, index: index, reason: "the remote revID is not a string")
            }
        }
        if items.count == 4 {
            guard let size = items[3].intValue, size >= 0 else {
                throw .invalidRow(context: context, index: index, reason: "the body size is not a non-negative integer")
            }
            bodySize = size
        }
    }

    /// As LiteCore writes it: four items, `""` for an unknown remote revision (SG requires a string).
    var json: JSONValue {
        var items: [JSONValue] = [.string(docID), .string(revision.description)]
        if remoteRevision != nil || bodySize != nil {
            items.append(.string(remoteRevision?.description ?? ""))
        }
        if let bodySize {
            items.append(.integer(bodySize))
        }
        return .array(items)
    }
}

/// `proposeChanges` (spec §3.6): the active pusher asks which revisions the receiver will accept.
package struct ProposeChangesRequest: ReplicationRequest, Hashable {
    package static let profile = Profile.proposeChanges

    package var rows: [ProposedChange]
    /// Ask for `{"status":409,"rev":…}` instead of a bare 409 (LiteCore always sets it).
    package var conflictIncludesRev: Bool
    package var collection: Int?

    package init(rows: [ProposedChange], conflictIncludesRev: Bool = true, collection: Int? = nil) {
        self.rows = rows
        self.conflictIncludesRev = conflictIncludesRev
        self.collection = collection
    }

    /// The "push side caught up" marker CBL sends noReply in continuous mode.
    package var isCaughtUp: Bool { rows.isEmpty }

    package init(properties: MessageProperties, body: [UInt8]) throws(ProtocolError) {
        try properties.expectProfile(Self.profile)
        collection = try properties.collectionIndex(in: Self.profile)
        conflictIncludesRev = properties.flag("conflictIncludesRev")
        var rows: [ProposedChange] = []
        for (index, item) in try MessageBody.list(body, context: "proposeChanges body").enumerated() {
            rows.append(try ProposedChange(item, index: index))
        }
        self.rows = rows
    }

    package func encode() -> (properties: MessageProperties, body: [UInt8]) {
        var properties = Self.startProperties(collection: collection)
        properties.append("conflictIncludesRev", conflictIncludesRev, style: .literal)
        return (properties, JSONValue.array(rows.map(\.json)).serialized)
    }
}

/// The reply to `proposeChanges`: per row, whether to send the revision.
package struct ProposeChangesReply: ReplicationMessage, Hashable {
    package enum Status: Sendable, Hashable {
        /// `0`: send it.
        case accepted
        /// `304`: the receiver already has it.
        case alreadyKnown
        /// `409`: conflict, with the receiver's current revision (a version for CBMobile_4) when
        /// `conflictIncludesRev` was asked for.
        case conflict(currentRevision: WireRevision?)
        /// Any other status, e.g. 500.
        case failed(Int)

        package var code: Int {
            switch self {
            case .accepted: 0
            case .alreadyKnown: 304
            case .conflict: 409
            case .failed(let code): code
            }
        }

        init(code: Int, revision: WireRevision? = nil) {
            switch code {
            case 0: self = .accepted
            case 304: self = .alreadyKnown
            case 409: self = .conflict(currentRevision: revision)
            default: self = .failed(code)
            }
        }
    }

    package var statuses: [Status]
    package var capabilities: ReceiverCapabilities

    package init(statuses: [Status], capabilities: ReceiverCapabilities = ReceiverCapabilities()) {
        self.statuses = statuses
        self.capabilities = capabilities
    }

    /// The answer for row `index`; missing trailing entries mean "send it", so `[]` accepts everything.
    package func status(at index: Int) -> Status {
        statuses.indices.contains(index) ? statuses[index] : .accepted
    }

    package init(properties: MessageProperties, body: [UInt8]) throws(ProtocolError) {
        capabilities = try ReceiverCapabilities(properties: properties)
        let context = "proposeChanges reply"
        var statuses: [Status] = []
        for (index, item) in try MessageBody.list(body, context: context).enumerated() {
            switch item {
            case .null:
                statuses.append(.accepted)
            case .number(let number):
                guard let code = number.intValue else {
                    throw .invalidRow(context: context, index: index, reason: "\(number) is not an integer status")
                }
                statuses.append(Status(code: code))
            case .object(let object):
                guard let code = object["status"]?.intValue else {
                    throw .invalidRow(context: context, index: index, reason: "the object has no integer 'status'")
                }
                var revision: WireRevision?
                if let value = object["rev"] {
                    guard let text = value.stringValue else {
                        throw .invalidRow(context: context, index: index, reason: "'rev' is not a string")
                    }
                    revision = try WireRevision(received: text)
                }
                statuses.append(Status(code: code, revision: revision))
            default:
                throw .invalidRow(
                    context: context, index: index, reason: "expected a status or an object, got \(item.typeName)")
            }
        }
        self.statuses = statuses
    }

    /// Trailing zeros are left out; a conflict naming a revision is written as `{"status":409,"rev":…}`.
    package func encode() -> (properties: MessageProperties, body: [UInt8]) {
        var items: [JSONValue] = statuses.map { status in
            if case .conflict(let revision?) = status {
                return ["status": .integer(409), "rev": .string(revision.description)]
            }
            return .integer(status.code)
        }
        while items.last == .integer(0) {
            items.removeLast()
        }
        return (capabilities.properties, JSONValue.array(items).serialized)
    }
}
