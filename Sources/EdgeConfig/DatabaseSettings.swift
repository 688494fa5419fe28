import SyncIdentifiers

/// One `[[database]]` entry: a local document store that listeners serve and upstreams replicate.
public struct DatabaseSettings: Sendable, Equatable {
    /// The name clients use in their URL (`wss://host:port/<name>`).
    public var name: String
    /// The collections it holds, validated when the configuration was read (written `scope.collection`).
    public var collections: [CollectionName]
    /// How many revisions of a document's history are kept before older ones are pruned.
    package var maxRevisionTreeDepth: Int
    /// How long old revision bodies are kept so that deltas can be computed against them.
    package var deltaRetention: DeltaRetention

    public init(
        name: String,
        collections: [CollectionName] = [.default],
        maxRevisionTreeDepth: Int = 20,
        deltaRetention: DeltaRetention = DeltaRetention()
    ) {
        self.name = name
        self.collections = collections
        self.maxRevisionTreeDepth = maxRevisionTreeDepth
        self.deltaRetention = deltaRetention
    }
}

/// Retention of superseded revision bodies, which delta sync needs as the base of a delta.
///
/// A body is dropped as soon as either limit is exceeded.
public struct DeltaRetention: Sendable, Equatable {
    /// Superseded revision bodies kept per document; 0 keeps none (deltas only from the current revision).
    package var revisionBodies: Int
    /// Maximum age of a kept body; `nil` means no age limit.
    package var maximumAge: Duration?

    public init(revisionBodies: Int = 10, maximumAge: Duration? = .seconds(86_400)) {
        self.revisionBodies = revisionBodies
        self.maximumAge = maximumAge
    }
}
