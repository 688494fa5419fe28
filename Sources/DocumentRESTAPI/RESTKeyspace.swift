import EdgeStore
import Foundation
import SyncIdentifiers

/// A `{db}` or `{db}.{scope}.{collection}` path segment resolved to a served database and collection.
struct RESTKeyspace: Sendable {
    var database: DocumentDatabase
    var collection: CollectionName
    /// As the client wrote it, for messages.
    var text: String
}

extension RESTKeyspace {
    /// Splits a keyspace into its database name and collection; `{db}.{collection}` means the default scope,
    /// as in Sync Gateway. Nil when the text has too many parts to be a keyspace.
    static func parse(_ text: String) -> (database: String, collection: (scope: String, name: String)?)? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        switch parts.count {
        case 1: return (parts[0], nil)
        case 2: return (parts[0], (CollectionName.defaultName, parts[1]))
        case 3: return (parts[0], (parts[1], parts[2]))
        default: return nil
        }
    }
}
