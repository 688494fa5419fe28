import SyncIdentifiers

/// One revision of a document's revision tree, as loaded from storage (bodies are not loaded).
struct RevisionNode: Sendable {
    let revID: RevisionID
    var parent: RevisionID?
    let deleted: Bool
    var hasBody: Bool
    /// Seconds since 1970 when this revision was stored locally.
    let storedAt: Double
}

/// The in-memory revision tree of one document: the rules for leaves, the winner, history,
/// grafting, pruning and body retention. Persistence lives in `Database+RevisionStorage.swift`.
struct RevisionTree: Sendable {
    private(set) var nodes: [RevisionID: RevisionNode]

    init(nodes: [RevisionNode] = []) {
        self.nodes = Dictionary(
            nodes.map { ($0.revID, $0) }, uniquingKeysWith: { first, _ in first })
    }

    var isEmpty: Bool { nodes.isEmpty }

    func contains(_ revID: RevisionID) -> Bool { nodes[revID] != nil }

    subscript(revID: RevisionID) -> RevisionNode? { nodes[revID] }

    /// Leaves, best candidate for winner first.
    var leaves: [RevisionNode] {
        let parents = Set(nodes.values.compactMap(\.parent))
        return nodes.values.filter { !parents.contains($0.revID) }.sorted(by: Self.winsOver)
    }

    func isLeaf(_ revID: RevisionID) -> Bool {
        nodes[revID] != nil && !nodes.values.contains { $0.parent == revID }
    }

    /// The current revision: a live leaf beats a deleted one, then the higher revision ID
    /// (generation, then digest string).
    var winner: RevisionNode? { leaves.first }

    static func winsOver(_ lhs: RevisionNode, _ rhs: RevisionNode) -> Bool {
        if lhs.deleted != rhs.deleted { return !lhs.deleted }
        return lhs.revID > rhs.revID
    }

    /// Ancestors of `revID`, newest first, excluding `revID` itself.
    func ancestors(of revID: RevisionID) -> [RevisionID] {
        var result: [RevisionID] = []
        var current = nodes[revID]?.parent
        while let revID = current, let node = nodes[revID] {
            result.append(revID)
            current = node.parent
        }
        return result
    }

    /// The `history` of a `rev` message: ancestors newest first, up to and including the first one
    /// in `known`, and at most `maxCount` of them.
    func history(of revID: RevisionID, stoppingAt known: Set<RevisionID>, maxCount: Int) -> [RevisionID] {
        var history: [RevisionID] = []
        for ancestor in ancestors(of: revID) where history.count < maxCount {
            history.append(ancestor)
            if known.contains(ancestor) { break }
        }
        return history
    }

    mutating func insert(_ node: RevisionNode) {
        nodes[node.revID] = node
    }

    mutating func dropBody(of revID: RevisionID) {
        nodes[revID]?.hasBody = false
    }

    /// Removes the leaf `leaf` and the ancestors that lead only to it, up to where its branch
    /// forks from another leaf's history, and returns the removed revisions.
    mutating func removeBranch(endingAt leaf: RevisionID) -> [RevisionID] {
        var shared = Set<RevisionID>()
        for other in leaves where other.revID != leaf {
            shared.insert(other.revID)
            shared.formUnion(ancestors(of: other.revID))
        }
        var removed: [RevisionID] = []
        var current: RevisionID? = leaf
        while let revID = current, !shared.contains(revID), let node = nodes[revID] {
            removed.append(revID)
            nodes[revID] = nil
            current = node.parent
        }
        return removed
    }

    /// The result of pruning: revisions removed, and surviving revisions that became roots.
    struct Pruning {
        var removed: [RevisionID] = []
        var newRoots: [RevisionID] = []
    }

    /// Keeps, along every branch, the `maxDepth` newest revisions (counted from each leaf); older
    /// revisions are removed and the oldest survivors become roots, so the tree stays consistent.
    mutating func prune(maxDepth: Int) -> Pruning {
        var kept = Set<RevisionID>()
        for leaf in leaves {
            var current: RevisionID? = leaf.revID
            var depth = 0
            while let revID = current, depth < maxDepth, let node = nodes[revID] {
                kept.insert(revID)
                current = node.parent
                depth += 1
            }
        }
        var pruning = Pruning()
        guard kept.count < nodes.count else { return pruning }
        for revID in nodes.keys where !kept.contains(revID) {
            pruning.removed.append(revID)
        }
        for revID in pruning.removed { nodes[revID] = nil }
        for (revID, node) in nodes {
            if let parent = node.parent, nodes[parent] == nil {
                nodes[revID]?.parent = nil
                pruning.newRoots.append(revID)
            }
        }
        return pruning
    }

    /// Non-leaf revisions that still have a body the retention policy no longer allows.
    func bodiesToDrop(retention: RevisionBodyRetention, now: Double) -> [RevisionID] {
        var distanceFromLeaf: [RevisionID: Int] = [:]
        for leaf in leaves {
            var current = leaf.parent
            var distance = 1
            while let revID = current, let node = nodes[revID] {
                if let known = distanceFromLeaf[revID], known <= distance { break }
                distanceFromLeaf[revID] = distance
                current = node.parent
                distance += 1
            }
        }
        let maxAgeSeconds = retention.maxAge?.timeInterval
        return distanceFromLeaf.compactMap { revID, distance in
            guard let node = nodes[revID], node.hasBody else { return nil }
            if let maxDistance = retention.maxAncestorDistance, distance > maxDistance {
                return revID
            }
            if let maxAgeSeconds, now - node.storedAt > maxAgeSeconds { return revID }
            return nil
        }
    }
}
