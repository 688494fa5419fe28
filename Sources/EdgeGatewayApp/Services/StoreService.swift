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
        store = try DocumentStore.forConfiguration(configuration)
        var databases: [DocumentDatabase] = []
        for settings in configuration.databases {
            let database = try await store.openConfigured(settings)
            databases.append(database)
            logger.info(
                "database open",
                metadata: [
                    "database": "\(settings.name)",
                    "path": "\(database.path)",
                    "collections": "\(settings.collections.map(\.qualifiedName).joined(separator: ","))",
                ]
            )
        }
        self.databases = databases
    }

    /// How often expired delta bases and unreferenced blobs are swept. Hourly keeps the work small and the
    /// disk bounded; nothing correctness-related waits on it.
    static let maintenanceInterval = Duration.seconds(3600)

    func run() async throws {
        let otherProcessesWatch = await watchOtherProcessesCommits()
        // The sweep stops as soon as shutdown begins; a sweep in flight is one write transaction, which
        // finishes or rolls back as a whole.
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                try? await Task.sleep(for: Self.maintenanceInterval)
                guard !Task.isCancelled else { break }
                await self.sweep()
            }
        }
        otherProcessesWatch.cancel()
        for database in databases {
            do {
                try database.close()
            } catch {
                logger.error(
                    "closing database failed", metadata: ["database": "\(database.name)", "error": "\(error)"])
            }
        }
        logger.info("databases closed")
    }

    func sweep() async {
        for database in databases {
            do {
                let bodies = try await database.dropExpiredRevisionBodies()
                let blobs = try await database.collectGarbageBlobs()
                if bodies > 0 || blobs > 0 {
                    logger.info(
                        "store maintenance",
                        metadata: [
                            "database": "\(database.name)", "revisionBodiesDropped": "\(bodies)",
                            "blobsCollected": "\(blobs)",
                        ]
                    )
                }
            } catch {
                logger.error(
                    "store maintenance failed", metadata: ["database": "\(database.name)", "error": "\(error)"])
            }
        }
    }

    func healthReports() async -> [ComponentHealth] {
        var reports: [ComponentHealth] = []
        for database in databases {
            do {
                try await database.probeWritable()
                let sequence = try await database.lastSequence()
                // Taking the write lock needs no space; a write refused for space is what tells the disk is full.
                if database.isDiskFull {
                    reports.append(
                        ComponentHealth(
                            name: database.name,
                            kind: .store,
                            status: .degraded,
                            reason: "disk full: writes are refused until space is freed; reads and pulls still work",
                            details: ["writable": false, "lastSequence": .integer(Int(sequence))]
                        )
                    )
                    continue
                }
                reports.append(
                    ComponentHealth(
                        name: database.name,
                        kind: .store,
                        status: .up,
                        details: ["writable": true, "lastSequence": .integer(Int(sequence))]
                    )
                )
            } catch StoreError.diskFull {
                reports.append(
                    ComponentHealth(
                        name: database.name, kind: .store, status: .degraded,
                        reason: "disk full: writes are refused until space is freed; reads and pulls still work",
                        details: ["writable": false]
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
