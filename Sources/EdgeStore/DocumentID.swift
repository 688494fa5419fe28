/// Document ID rules shared by every write and read path.
///
/// Couchbase Lite accepts IDs of 1–250 bytes of UTF-8 that do not start with `_` (the prefix is
/// reserved for Sync Gateway metadata such as `_sync:` and for CouchDB-era special documents) and
/// contain no control characters. The same rules are applied to IDs arriving from peers, so a
/// document that could never be stored by Couchbase Lite is never stored here either.
package enum DocumentID {
    /// The longest accepted document ID, in UTF-8 bytes.
    package static let maxLength = 250

    /// Throws `StoreError.invalidDocumentID` unless `docID` is acceptable.
    package static func validate(_ docID: String) throws(StoreError) {
        let utf8 = docID.utf8
        guard let first = utf8.first else {
            throw .invalidDocumentID(docID, reason: "must not be empty")
        }
        guard utf8.count <= maxLength else {
            throw .invalidDocumentID(docID, reason: "longer than \(maxLength) bytes of UTF-8")
        }
        guard first != UInt8(ascii: "_") else {
            throw .invalidDocumentID(docID, reason: "must not start with '_' (reserved prefix)")
        }
        for scalar in docID.unicodeScalars where isControl(scalar) {
            throw .invalidDocumentID(
                docID, reason: "contains control character U+\(hex(scalar.value))")
        }
    }

    /// Local (non-replicated) document IDs, such as checkpoint IDs, only need to be non-empty,
    /// bounded and free of control characters; they may start with `_`.
    static func validateLocal(_ docID: String) throws(StoreError) {
        guard !docID.utf8.isEmpty else {
            throw .invalidDocumentID(docID, reason: "must not be empty")
        }
        guard docID.utf8.count <= maxLength else {
            throw .invalidDocumentID(docID, reason: "longer than \(maxLength) bytes of UTF-8")
        }
        for scalar in docID.unicodeScalars where isControl(scalar) {
            throw .invalidDocumentID(
                docID, reason: "contains control character U+\(hex(scalar.value))")
        }
    }

    // Swift strings are always valid Unicode (invalid UTF-8 is repaired to U+FFFD when decoded), so
    // the remaining check is for C0/C1 control characters and DEL.
    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }

    private static func hex(_ value: UInt32) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}
