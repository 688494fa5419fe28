import SyncIdentifiers

extension RevisionID {
    /// Parses a revision ID a peer sent; a peer is answered with the protocol's own error.
    init(received text: String) throws(ProtocolError) {
        do throws(InvalidRevisionID) {
            try self.init(text)
        } catch {
            throw .invalidRevisionID(error.text, reason: error.reason.description)
        }
    }
}
