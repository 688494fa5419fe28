import SyncIdentifiers

extension BlobDigest {
    /// Parses a digest a peer sent; a peer is answered with the protocol's own error.
    init(received text: String) throws(ProtocolError) {
        do throws(InvalidBlobDigest) {
            try self.init(text)
        } catch {
            throw .invalidDigest(error.text)
        }
    }
}
