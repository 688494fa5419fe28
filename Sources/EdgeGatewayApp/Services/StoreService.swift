import EdgeConfig
import EdgeStore
import Foundation
import Logging
import ServiceLifecycle

/// Owns the node's databases: opens every configured one before anything listens, reports whether each is
/// open and writable, and closes them last on shutdown, after the servers have drained.
final class StoreService: Service, HealthReporting {
    let store: DocumentStore
    let databases: [DocumentDatabase]
    private let logger: Logger

    init(configuration: GatewayConfiguration, logger: Logger) async throws {
        self.logger = logger
        let dataDirectory = URL(fileURLWithPath: configuration.node.dataDirectory, isDirectory: true)
        store = try DocumentStore(dataDirectory: dataDirectory)
        var databases: [DocumentDatabase] = []
        for settings in configuration.databases {
            let database = try await store.database(
                named: settings.name,
                configuration: StoreConfiguration(settings: settings)
            )
            for name in settings.collections {
                try await database.createCollection(try CollectionName(parsing: name))
            }
            databases.append(database)
            logger.info(
                "database open",
                metadata: [
                    "database": "\(settings.name)",
                    "path": "\(database.path)",
                    "collections": "\(settings.collections.joined(separator: ","))",
                ]
            )
        }
        self.databases = databases
    }

    func run() async throws {
        try? await gracefulShutdown()
        for database in databases {
            do {
                try database.close()
            } catch {
                logger.error("closing database failed", metadata: ["database": "\(database.name)", "error": "\(error)"])
            }
        }
        logger.info("databases closed")
    }

    func healthReports() async -> [ComponentHealth] {
        var reports: [ComponentHealth] = []
        for database in databases {
            do {
                try await database.probeWritable()
                let sequence = try await database.lastSequence()
                reports.append(
                    ComponentHealth(
                        name: database.name,
                        kind: .store,
                        status: .up,
                        details: ["writable": true, "lastSequence": .integer(Int(sequence))]
                    )
                )
            } catch {
                reports.append(
                    ComponentHealth(
                        name: database.name,
                        kind: .store,
                        status: .down,
                        reason: "not writable: \(error)",
                        details: ["writable": false]
                    )
                )
            }
        }
        return reports
    }
}

extension StoreConfiguration {
    init(settings: DatabaseSettings) {
        self.init(
            maxRevisionTreeDepth: settings.maxRevisionTreeDepth,
            bodyRetention: RevisionBodyRetention(
                maxAncestorDistance: settings.deltaRetention.revisionBodies,
                maxAge: settings.deltaRetention.maximumAge
            )
        )
    }
}
