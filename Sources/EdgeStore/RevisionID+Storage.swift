import SyncIdentifiers

extension RevisionID {
    /// Reads back a revision ID the store wrote to `table`; one that does not parse means the file was damaged.
    ///
    /// Stored IDs are checked by the rules received ones are, and every ID the store ever wrote passes them: it has
    /// only written the `description` of a `RevisionID` it had validated or minted. Before the store took
    /// LiteCore's rules, those IDs had a decimal generation from 1 to 2³²−1 (a `UInt32`, so without sign or leading
    /// zero, whatever text it was parsed from) and a non-empty, even-length, lowercase hex digest of at most 37
    /// bytes, which fits beside the 5-byte varint of the largest generation: nothing LiteCore's rules refuse
    /// (`RevisionIDTests.formerStoreIDsStillParse` in SyncIdentifiersTests checks it).
    init(stored text: String?, in table: String) throws(StoreError) {
        guard let text else {
            throw .corruptDatabase(path: table, reason: "a stored revision ID is NULL")
        }
        do throws(InvalidRevisionID) {
            try self.init(text)
        } catch {
            throw .corruptDatabase(path: table, reason: "stored revision ID '\(text)' is malformed: \(error.reason)")
        }
    }
}
