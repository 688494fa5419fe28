import VersionVectors

/// Tunables shared by every database a `DocumentStore` opens.
public struct StoreConfiguration: Sendable {
    /// How many revisions deep each branch of a revision tree is kept; older ancestors are pruned.
    package var maxRevisionTreeDepth: Int
    /// Which non-leaf revision bodies are kept to serve as delta-sync bases.
    package var bodyRetention: RevisionBodyRetention
    /// The source of the versions this node writes (CBMobile_4): the gateway's, derived from its node ID. `nil`
    /// gives each database its own, from its UUID, as Couchbase Lite does.
    package var versionSource: SourceID?
    /// How long a source stays in a document's previous versions after its last write there; older entries are
    /// pruned as Sync Gateway prunes them, so that vectors do not grow with every device that ever wrote.
    package var previousVersionRetention: Duration

    public init(maxRevisionTreeDepth: Int = 20, bodyRetention: RevisionBodyRetention = .init()) {
        precondition(maxRevisionTreeDepth >= 1, "a revision tree must keep at least its leaves")
        self.maxRevisionTreeDepth = maxRevisionTreeDepth
        self.bodyRetention = bodyRetention
        self.versionSource = nil
        self.previousVersionRetention = .seconds(30 * 86_400)
    }
}

/// Retention of bodies of revisions that are no longer leaves. Leaf bodies are always kept.
///
/// A non-leaf body is kept only while it satisfies every limit that is set: it is at most
/// `maxAncestorDistance` generations above a leaf, and it was stored at most `maxAge` ago. With
/// both limits `nil`, every body is kept until its revision is pruned.
public struct RevisionBodyRetention: Sendable, Equatable {
    /// The number of ancestors of a leaf whose bodies are kept (1 = the parent only, 0 = none).
    package var maxAncestorDistance: Int?
    /// The longest time a non-leaf body is kept after it was stored.
    package var maxAge: Duration?

    public init(maxAncestorDistance: Int? = 3, maxAge: Duration? = nil) {
        self.maxAncestorDistance = maxAncestorDistance
        self.maxAge = maxAge
    }
}

extension Duration {
    /// The duration in seconds, with sub-second precision.
    var timeInterval: Double {
        Double(components.seconds) + Double(components.attoseconds) * 1e-18
    }
}
