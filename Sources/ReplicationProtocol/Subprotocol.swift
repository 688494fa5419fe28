/// A `Sec-WebSocket-Protocol` value of the replication protocol, `BLIP_3+CBMobile_<n>` (spec §1.3).
public struct ReplicationSubprotocol: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    package static let headerName = "Sec-WebSocket-Protocol"

    public let rawValue: String

    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// Version vectors (Couchbase Lite 4, Sync Gateway 4).
    public static let cbMobile4 = ReplicationSubprotocol(rawValue: "BLIP_3+CBMobile_4")
    public static let cbMobile3 = ReplicationSubprotocol(rawValue: "BLIP_3+CBMobile_3")
    package static let cbMobile2 = ReplicationSubprotocol(rawValue: "BLIP_3+CBMobile_2")

    /// What an active replicator offers by default (`protocol = "auto"`), as a Couchbase Lite 4.0 puller does:
    /// version vectors where the server speaks them, rev trees otherwise.
    package static let activeOffer: [ReplicationSubprotocol] = [.cbMobile4, .cbMobile3]
    /// Version vectors only (`protocol = "4"`): what a Couchbase Lite 4 pusher offers.
    package static let versionVectorOffer: [ReplicationSubprotocol] = [.cbMobile4]
    /// Rev trees only (`protocol = "3"`), as Couchbase Lite 3.0–3.2 offer them.
    package static let revisionTreeOffer: [ReplicationSubprotocol] = [.cbMobile3, .cbMobile2]

    /// What the listener serves, most preferred first: a Couchbase Lite 4 client that pushes offers CBMobile_4
    /// alone, a 3.x client CBMobile_3 and 2, and each gets its own.
    package static let served: [ReplicationSubprotocol] = [.cbMobile4, .cbMobile3, .cbMobile2]

    /// Whether revisions travel as version vectors (CBMobile_4 and later) rather than rev-tree IDs.
    package var usesVersionVectors: Bool { (replicationVersion ?? 0) >= 4 }

    /// The `CBMobile` major version, or `nil` for a value that isn't `BLIP_3+CBMobile_<n>`.
    package var replicationVersion: Int? {
        let prefix = "BLIP_3+CBMobile_"
        guard rawValue.hasPrefix(prefix) else { return nil }
        return Int(rawValue.dropFirst(prefix.count))
    }

    public var description: String { rawValue }

    /// A comma-separated header value, most preferred first.
    package static func offer(_ protocols: [ReplicationSubprotocol]) -> String {
        protocols.map(\.rawValue).joined(separator: ",")
    }

    /// The entries of `Sec-WebSocket-Protocol` header lines, in the client's order, spaces trimmed.
    package static func entries(offered headerValues: [String]) -> [ReplicationSubprotocol] {
        headerValues.flatMap { $0.split(separator: ",") }.map { ReplicationSubprotocol(rawValue: $0.trimmingSpaces) }
    }

    /// The go-blip rule: walk the client's list in its order (spaces trimmed; several header lines
    /// are read in order) and take the first entry we support, so the client's preference wins.
    /// `nil` when nothing matches.
    package static func select(
        offered headerValues: [String],
        supported: [ReplicationSubprotocol] = served
    ) -> ReplicationSubprotocol? {
        entries(offered: headerValues).first { supported.contains($0) }
    }

    package static func select(
        offered headerValue: String,
        supported: [ReplicationSubprotocol] = served
    ) -> ReplicationSubprotocol? {
        select(offered: [headerValue], supported: supported)
    }

    /// The active side's check of the 101 response: the echoed value must be one it offered
    /// (LiteCore fails with 403 "Server did not accept protocol" otherwise).
    package static func accepted(
        response headerValue: String?,
        offered: [ReplicationSubprotocol] = activeOffer
    ) -> ReplicationSubprotocol? {
        guard let headerValue else { return nil }
        let echoed = ReplicationSubprotocol(rawValue: Substring(headerValue).trimmingSpaces)
        return offered.contains(echoed) ? echoed : nil
    }

    /// Sync Gateway's body for its HTTP 500 when nothing matches.
    package static func mismatchMessage(supported: [ReplicationSubprotocol] = served) -> String {
        "I only speak \(offer(supported)) protocols"
    }
}
