import Foundation
import SyncIdentifiers

/// A local write for `DocumentDatabase.saveBatch`: a new revision on top of `parentRevID` (a current leaf),
/// or of nothing for a new document; with `deleted`, a tombstone.
package struct NewRevision: Sendable {
    package var docID: String
    package var body: Data
    package var parentRevID: RevisionID?
    package var deleted: Bool

    package init(docID: String, body: Data, parentRevID: RevisionID?, deleted: Bool = false) {
        self.docID = docID
        self.body = body
        self.parentRevID = parentRevID
        self.deleted = deleted
    }
}

extension StoreError {
    /// Errors of one write of a batch that leave the others to commit: the document's own input or state.
    var failsOnlyItsDocument: Bool {
        switch self {
        case .invalidDocumentID, .invalidRevisionID, .invalidRevisionHistory, .invalidJSON, .conflict,
            .documentNotFound, .revisionNotFound:
            true
        default:
            false
        }
    }
}
