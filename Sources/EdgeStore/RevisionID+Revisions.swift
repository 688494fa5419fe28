import SyncIdentifiers

extension RevisionID {
    /// A revision and its ancestors, newest first, from CouchDB's `_revisions` form: `{"start": generation,
    /// "ids": [digest, parent's digest, …]}`, as the REST API, exports and imports write histories.
    package static func chain(start: Int, digests: [String]) throws(StoreError) -> [RevisionID] {
        var chain: [RevisionID] = []
        chain.reserveCapacity(digests.count)
        for (offset, digest) in digests.enumerated() {
            let number = start - offset
            do throws(InvalidRevisionID) {
                guard let generation = UInt32(exactly: number) else {
                    throw InvalidRevisionID(
                        text: "\(number)-\(digest)", reason: number < 1 ? .generationBelowOne : .generationTooLarge)
                }
                chain.append(try RevisionID(generation: generation, digest: digest))
            } catch {
                throw .invalidRevisionID(error)
            }
        }
        return chain
    }
}
