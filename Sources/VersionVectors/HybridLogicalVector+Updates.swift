import SyncIdentifiers

/// How a vector changes when its document is written, as Sync Gateway 4 and LiteCore change it
/// (`db/hybrid_logical_vector.go`: `AddVersion`, `UpdateWithIncomingHLV`, `Compact`). Each keeps the invariants
/// `init(current:merge:previous:legacy:)` checks: one entry per source, never a lone merge version.
extension HybridLogicalVector {
    /// The vector after the document was written again as `version`: the current version and the merge versions
    /// become previous versions (a source keeping only its newest entry), and the writer's own older entry goes,
    /// as its new version supersedes it.
    package func adding(_ version: Version) -> HybridLogicalVector {
        var previous = NewestVersions(previous)
        for superseded in [current] + merge { previous.keep(superseded) }
        previous.remove(version.source)
        return HybridLogicalVector(verified: version, merge: [], previous: previous.newestFirst, legacy: legacy)
    }

    /// The vector of an incoming revision that descends from the one stored here, keeping what only this vector
    /// knew: every source of this vector that `incoming` lacks, or holds an older entry of in its previous versions,
    /// joins the previous versions with its newest entry. The legacy revisions are the incoming ones, or these when
    /// the sender knew none.
    package func accepting(_ incoming: HybridLogicalVector) -> HybridLogicalVector {
        let leading = Set(([incoming.current] + incoming.merge).map(\.source))
        var previous = NewestVersions(incoming.previous)
        for version in versions where !leading.contains(version.source) { previous.keep(version) }
        return HybridLogicalVector(
            verified: incoming.current, merge: incoming.merge, previous: previous.newestFirst,
            legacy: incoming.legacy.isEmpty ? legacy : incoming.legacy)
    }

    /// The vector without the previous versions written before `timestamp`: Sync Gateway's pruning, which keeps
    /// vectors from growing with every device that ever wrote a document. The current and merge versions stay.
    package func pruningPreviousVersions(olderThan timestamp: UInt64) -> HybridLogicalVector {
        let kept = previous.filter { $0.timestamp >= timestamp }
        guard kept.count != previous.count else { return self }
        return HybridLogicalVector(verified: current, merge: merge, previous: kept, legacy: legacy)
    }

    /// For results of the updates above, whose invariants hold by construction.
    private init(verified current: Version, merge: [Version], previous: [Version], legacy: [RevisionID]) {
        do {
            try self.init(current: current, merge: merge, previous: previous, legacy: legacy)
        } catch {
            preconditionFailure("an updated vector broke an invariant: \(error)")
        }
    }
}

/// Previous versions by source, each source once with its newest entry.
private struct NewestVersions {
    private var bySource: [SourceID: Version] = [:]

    init(_ versions: [Version]) {
        for version in versions { keep(version) }
    }

    mutating func keep(_ version: Version) {
        if let known = bySource[version.source], known.timestamp >= version.timestamp { return }
        bySource[version.source] = version
    }

    mutating func remove(_ source: SourceID) {
        bySource[source] = nil
    }

    /// Newest first, and by source text among equal timestamps, so that one vector has one spelling.
    var newestFirst: [Version] {
        bySource.values.sorted {
            ($0.timestamp, $1.source.description) > ($1.timestamp, $0.source.description)
        }
    }
}

extension HybridLogicalVector {
    /// The vector of a document's first version: after `legacyParent`, the rev-tree revision it was written over
    /// when the document had no vector yet, so that a peer holding that revision sees this one descend from it.
    package init(first version: Version, after legacyParent: RevisionID?) {
        self.init(verified: version, merge: [], previous: [], legacy: legacyParent.map { [$0] } ?? [])
    }
}
