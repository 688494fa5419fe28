import SyncIdentifiers

/// A document's hybrid logical vector (spec §4.6): the current version, merge versions (none, or two and more,
/// when the current version merged concurrent ones) and previous versions, each source at most once. A document
/// written before it had a vector keeps its rev-tree history behind the vector, older than every version, as
/// LiteCore's `VersionVecWithLegacy` and Sync Gateway's `history` do.
package struct HybridLogicalVector: Hashable, Sendable, CustomStringConvertible {
    package let current: Version
    package let merge: [Version]
    package let previous: [Version]
    /// Rev-tree revisions older than every version, newest first.
    package let legacy: [RevisionID]

    package init(current: Version, merge: [Version] = [], previous: [Version] = [], legacy: [RevisionID] = [])
        throws(InvalidVersion.Reason)
    {
        guard merge.count != 1 else { throw .loneMergeVersion }
        var sources: Set<SourceID> = []
        for version in [current] + merge + previous where !sources.insert(version.source).inserted {
            throw .repeatedSource(version.source)
        }
        self.current = current
        self.merge = merge
        self.previous = previous
        self.legacy = legacy
    }

    /// Parses a whole vector as a `proposeChanges` row carries it: `cv[, mv…][; pv…]`, with optional spaces after
    /// the delimiters and rev-tree IDs after the last version.
    package init(_ text: String) throws(InvalidVersion) {
        do throws(InvalidVersion.Reason) {
            self = try scanning(Substring(text)) { bytes throws(InvalidVersion.Reason) in
                let (headText, tailText) = bytes.splitOnce(at: UInt8(ascii: ";"))
                let head = try Self.entries(headText)
                guard case .version(let current)? = head.first else { throw .emptyVector }
                let tail = try tailText.map(Self.entries) ?? []
                return try HybridLogicalVector(current: current, rest: Array(head.dropFirst()), previous: tail)
            }
        } catch {
            throw InvalidVersion(text: text, reason: error)
        }
    }

    /// A vector from a `rev` message's `rev` (the current version) and `history` (`mv…;pv…` or `pv…`; nil or
    /// empty for a vector of one version).
    package init(revision: String, history: String?) throws(InvalidVersion) {
        let current = try Version(revision)
        // An absent history reads as an empty one: no entries before or after the `;`.
        let history = history ?? ""
        do throws(InvalidVersion.Reason) {
            self = try scanning(Substring(history)) { bytes throws(InvalidVersion.Reason) in
                switch bytes.splitOnce(at: UInt8(ascii: ";")) {
                case (let merge, let previous?):
                    try HybridLogicalVector(
                        current: current, rest: try Self.entries(merge), previous: try Self.entries(previous))
                case (let previous, nil):
                    try HybridLogicalVector(current: current, rest: [], previous: try Self.entries(previous))
                }
            }
            try checkCurrentIsNewest()
        } catch {
            throw InvalidVersion(text: history, reason: error)
        }
    }

    /// A received vector's current version must be its newest: the writer's clock was ahead of everything it had
    /// seen when it stamped it. Checked where a peer's text is parsed (`init(revision:history:)` and the protocol's
    /// readers), not for vectors this node stored.
    package func checkCurrentIsNewest() throws(InvalidVersion.Reason) {
        if let newer = (merge + previous).first(where: { $0.timestamp >= current.timestamp }) {
            throw .currentOlderThan(newer)
        }
    }

    /// `rest` follows the current version before the `;`: merge versions. Legacy revisions may end either part.
    private init(current: Version, rest: [Entry], previous: [Entry]) throws(InvalidVersion.Reason) {
        let all = rest + previous
        let versionCount = all.prefix { if case .version = $0 { true } else { false } }.count
        var legacy: [RevisionID] = []
        for entry in all[versionCount...] {
            guard case .legacy(let revision) = entry else { throw .legacyRevisionBeforeVersion }
            legacy.append(revision)
        }
        let merge = rest.prefix(versionCount).compactMap(\.version)
        let previousVersions = all.prefix(versionCount).dropFirst(merge.count).compactMap(\.version)
        try self.init(current: current, merge: merge, previous: previousVersions, legacy: legacy)
    }

    private enum Entry {
        case version(Version)
        case legacy(RevisionID)

        var version: Version? {
            if case .version(let version) = self { version } else { nil }
        }
    }

    /// The comma-separated entries of one part; empty for an empty or blank part (a trailing `;`).
    private static func entries(_ part: VersionTextBytes) throws(InvalidVersion.Reason) -> [Entry] {
        var rest = part.trimmingSpaces
        guard !rest.isEmpty else { return [] }
        var entries: [Entry] = []
        while true {
            let (item, remainder) = rest.splitOnce(at: UInt8(ascii: ","))
            let text = item.trimmingSpaces
            if text.contains(UInt8(ascii: "@")) {
                entries.append(.version(try Version(textBytes: text)))
            } else {
                do throws(InvalidRevisionID) {
                    entries.append(.legacy(try RevisionID(String(decoding: text, as: UTF8.self))))
                } catch {
                    throw .invalidLegacyRevision(error.reason)
                }
            }
            guard let remainder else { return entries }
            rest = remainder
        }
    }

    /// The vector as `proposeChanges` sends it: `cv, mv…; pv…`, the part after `;` left out when empty.
    package var description: String {
        var text = VectorText(versions: 1 + merge.count + previous.count, legacy: legacy.count)
        text.append(current)
        for version in merge {
            text.append(version, after: ", ")
        }
        text.appendPrevious(previous, legacy, after: "; ")
        return text.string
    }

    /// The `history` property of a `rev` carrying this vector; nil for a vector of one version.
    package var history: String? {
        guard !merge.isEmpty || !previous.isEmpty || !legacy.isEmpty else { return nil }
        var text = VectorText(versions: merge.count + previous.count, legacy: legacy.count)
        if !merge.isEmpty {
            for (index, version) in merge.enumerated() {
                text.append(version, after: index == 0 ? "" : ", ")
            }
            // Even with nothing after it: without the `;`, merge versions would read as previous ones.
            text.append("; ")
        }
        text.appendPrevious(previous, legacy, after: "")
        return text.string
    }

    /// Every version, the current one first.
    package var versions: [Version] { [current] + merge + previous }

    /// Whether this vector has seen `version`: it holds an entry of that source at that time or later.
    package func covers(_ version: Version) -> Bool {
        versions.contains { $0.source == version.source && $0.timestamp >= version.timestamp }
    }

    package enum Comparison: Sendable, Equatable {
        case same
        /// This vector has seen the other's current version: it descends from it.
        case newer
        case older
        /// Neither has seen the other's current version.
        case conflicting
    }

    /// How this vector relates to `other`, by their current versions, as Sync Gateway's `CheckProposedVersion`
    /// and LiteCore's vector comparison decide it.
    package func compare(to other: HybridLogicalVector) -> Comparison {
        if current == other.current { return .same }
        if covers(other.current) { return .newer }
        if other.covers(current) { return .older }
        return .conflicting
    }
}

/// A vector's text as it is written, built in one buffer: every `rev` and `changes` row sent to a CBMobile_4 peer,
/// and every revision stored, writes one.
private struct VectorText {
    private var bytes: [UInt8] = []

    /// Room for this many entries and their separators: 41 bytes for the longest version (16 hex digits, `@`, 22
    /// characters of source) and its separator, 44 for a SHA-1 revision ID of up to four digits and its separator.
    /// Longer legacy IDs grow the buffer.
    init(versions: Int, legacy: Int) {
        bytes.reserveCapacity(versions * 41 + legacy * 44)
    }

    var string: String { String(decoding: bytes, as: UTF8.self) }

    mutating func append(_ version: Version, after separator: StaticString = "") {
        append(separator)
        let start = bytes.count
        bytes.append(contentsOf: repeatElement(0, count: version.textLength))
        bytes.withUnsafeMutableBufferPointer { buffer in
            version.write(into: UnsafeMutableBufferPointer(rebasing: buffer[start...]))
        }
    }

    /// The previous versions, then the legacy revisions, separated by `, `; `lead` goes before them when there
    /// are any.
    mutating func appendPrevious(_ previous: [Version], _ legacy: [RevisionID], after lead: StaticString) {
        guard !previous.isEmpty || !legacy.isEmpty else { return }
        append(lead)
        for (index, version) in previous.enumerated() {
            append(version, after: index == 0 ? "" : ", ")
        }
        for (index, revision) in legacy.enumerated() {
            append(index == 0 && previous.isEmpty ? "" : ", ")
            bytes.append(contentsOf: revision.description.utf8)
        }
    }

    mutating func append(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }
}
