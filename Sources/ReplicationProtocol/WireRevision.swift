import SyncIdentifiers
import VersionVectors

/// A revision as a peer names it on the wire. CBMobile_3 peers use rev-tree IDs (`3-a1b2…`, spec §4.1). CBMobile_4
/// peers use version vectors (`<hex time>@<source>`, spec §4.6) and still use a rev-tree ID for a revision written
/// before its document had a vector, as LiteCore 4 and Sync Gateway 4 do; the `@` tells the two apart.
package enum WireRevision: Sendable, Hashable, CustomStringConvertible {
    case tree(RevisionID)
    case vector(HybridLogicalVector)

    /// Parses a revision a peer sent: a whole vector (`cv, mv…; pv…`, as `proposeChanges` rows carry it) or a
    /// rev-tree ID.
    package init(received text: String) throws(ProtocolError) {
        guard Version.isVersionText(text) else {
            self = .tree(try RevisionID(received: text))
            return
        }
        let vector: HybridLogicalVector
        do throws(InvalidVersion) {
            vector = try HybridLogicalVector(text)
        } catch {
            throw .invalidVersion(error.text, reason: error.reason.description)
        }
        do throws(InvalidVersion.Reason) {
            try vector.checkCurrentIsNewest()
        } catch {
            throw .invalidVersion(text, reason: error.description)
        }
        self = .vector(vector)
    }

    /// A vector of this one version, as `changes` rows and `rev` properties name a revision.
    package init(_ version: Version) {
        self = .vector(HybridLogicalVector(first: version, after: nil))
    }

    /// The whole revision in one string: the rev-tree ID, or the whole vector.
    package var description: String {
        switch self {
        case .tree(let revisionID): revisionID.description
        case .vector(let vector): vector.description
        }
    }

    /// The rev-tree ID, when the revision is named by one.
    package var revisionID: RevisionID? {
        if case .tree(let revisionID) = self { revisionID } else { nil }
    }

    /// The rev-tree ID a CBMobile_3 exchange needs; a version vector there is a peer's protocol error.
    package func requiringRevisionID(in context: String) throws(ProtocolError) -> RevisionID {
        switch self {
        case .tree(let revisionID):
            return revisionID
        case .vector(let vector):
            throw .invalidVersion(
                vector.description, reason: "\(context) names revisions by rev-tree ID, not by version vector")
        }
    }
}
