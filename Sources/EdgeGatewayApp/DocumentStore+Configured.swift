import EdgeConfig
import EdgeIdentity
import EdgeStore
import Foundation
import SyncIdentifiers
import VersionVectors

extension DocumentStore {
    /// The store of a configuration's data directory.
    package static func forConfiguration(_ configuration: GatewayConfiguration) throws -> DocumentStore {
        try DocumentStore(dataDirectory: URL(fileURLWithPath: configuration.node.dataDirectory, isDirectory: true))
    }

    /// Opens a configured database with its settings and creates its configured collections, as the
    /// gateway does at start-up; the CLI's offline commands use the same path so that they see the same data.
    ///
    /// Versions written here carry the node's source, derived from its node ID, also when an offline command
    /// writes; without a node ID yet (an offline command on a directory the gateway never ran on), each database
    /// uses its own.
    package func openConfigured(_ settings: DatabaseSettings) async throws -> DocumentDatabase {
        var storeConfiguration = StoreConfiguration(settings: settings)
        storeConfiguration.versionSource = try NodeID.existing(dataDirectory: dataDirectory.path)
            .map { SourceID(uuid: $0.uuid) }
        let database = try database(named: settings.name, configuration: storeConfiguration)
        for collection in settings.collections {
            try await database.createCollection(collection)
        }
        return database
    }
}

extension GatewayConfiguration {
    /// The settings of the database named `name`, or of the only database when `name` is `nil`.
    package func databaseSettings(named name: String?) throws(DatabaseSelectionError) -> DatabaseSettings {
        if let name {
            guard let settings = databases.first(where: { $0.name == name }) else {
                throw .unknown(name, configured: databases.map(\.name))
            }
            return settings
        }
        guard databases.count == 1, let only = databases.first else {
            throw .ambiguous(configured: databases.map(\.name))
        }
        return only
    }
}

package enum DatabaseSelectionError: Error, CustomStringConvertible {
    case unknown(String, configured: [String])
    case ambiguous(configured: [String])

    package var description: String {
        switch self {
        case .unknown(let name, let configured):
            "no database \"\(name)\" in the configuration (configured: \(configured.joined(separator: ", ")))"
        case .ambiguous(let configured):
            "the configuration has several databases (\(configured.joined(separator: ", "))); choose one with --db"
        }
    }
}
