extension RevisionID {
    /// A revision and its ancestors, newest first, from CouchDB's `_revisions` form: `{"start": generation,
    /// "ids": [digest, parent's digest, …]}`, as the REST API, exports and imports write histories.
    public static func chain(start: Int, digests: [String]) throws(StoreError) -> [RevisionID] {
        var chain: [RevisionID] = []
        chain.reserveCapacity(digests.count)
        for (offset, digest) in digests.enumerated() {
            let generation = start - offset
            guard generation >= 1, generation <= Int(UInt32.max) else {
                throw .invalidRevisionID("\(generation)-\(digest)")
            }
            chain.append(try RevisionID(generation: UInt32(generation), digest: digest))
        }
        return chain
    }
}
