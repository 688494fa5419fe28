import VersionVectors

extension HybridLogicalVector {
    /// Reads back a vector the store wrote to `table` (its `description`); one that does not parse means the file
    /// was damaged.
    init(stored text: String, in table: String) throws(StoreError) {
        do throws(InvalidVersion) {
            try self.init(text)
        } catch {
            throw .corruptDatabase(path: table, reason: "stored version vector '\(text)' is malformed: \(error)")
        }
    }
}

extension Version {
    /// Reads back a version the store wrote to `table`.
    init(stored text: String, in table: String) throws(StoreError) {
        do throws(InvalidVersion) {
            try self.init(text)
        } catch {
            throw .corruptDatabase(path: table, reason: "stored version '\(text)' is malformed: \(error)")
        }
    }
}
