import EdgeConfig
import EdgeIdentity
import Foundation
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle
import SyncListener

/// Builds the whole gateway from a validated configuration, ready to run as a service.
///
/// Bad input that concerns one part of the node (a listener's certificate file, an upstream's password file, a
/// data directory the gateway cannot write) leaves that part down, logged once and reported by /health with the
/// fix, while the rest serves: an appliance under `restart: unless-stopped` must not crash-loop where nobody can
/// see why. Only an ops port that cannot be bound is thrown, before anything is opened, since nothing could
/// report the rest.
public func buildApplication(
    configuration: GatewayConfiguration,
    logger: Logger
) async throws -> some ApplicationProtocol {
    try await OpsPortCheck.requireAvailable(configuration.ops)
    let monitor = HealthMonitor(nodeName: configuration.node.name)
    var notStarted = NotStartedComponents()
    for entry in configuration.unavailableEntries {
        let kind: ComponentHealth.Kind = entry.kind == .listener ? .listener : .upstream
        notStarted.add(kind, entry.name, reason: "\(entry.problem)", logger: logger)
    }

    var nodeID: NodeID?
    var storeService: StoreService?
    var listeners: [SyncListener] = []
    var upstreams: [UpstreamService] = []
    var identityIsNew = false
    switch await openStore(configuration: configuration, logger: logger) {
    case .failure(let problem):
        notStarted.storeUnavailable(problem, configuration: configuration, logger: logger)
        // Read only: a directory the gateway must not change may still tell which node it belongs to.
        nodeID = try? NodeID.existing(dataDirectory: configuration.node.dataDirectory)
    case .success(let (id, store)):
        nodeID = id
        storeService = store
        monitor.register(store)
        let environment = SyncListener.Environment(
            store: store.store,
            dataDirectory: configuration.node.dataDirectory,
            nodeName: configuration.node.name,
            serverVersion: EdgeGatewayVersion.current,
            nodeID: id
        )
        identityIsNew =
            configuration.listeners.contains { $0.tls == .selfSigned }
            && !FileManager.default.fileExists(
                atPath: URL(fileURLWithPath: configuration.node.dataDirectory)
                    .appendingPathComponent("identity").appendingPathComponent(TLSIdentity.certificateFileName).path)
        for settings in configuration.listeners {
            do {
                listeners.append(
                    try SyncListener(
                        configuration: SyncListener.Configuration(
                            settings, databases: configuration.databases,
                            dataDirectory: configuration.node.dataDirectory),
                        environment: environment, logger: logger))
            } catch {
                notStarted.add(.listener, settings.name, reason: "\(error)", logger: logger)
            }
        }
        for settings in configuration.upstreams {
            guard let database = store.databases.first(where: { $0.name == settings.database }) else { continue }
            do {
                upstreams.append(
                    try await UpstreamService(
                        settings: settings, database: database, dataDirectory: configuration.node.dataDirectory,
                        logger: logger))
            } catch {
                let reason = "upstream \"\(settings.name)\": \(error)"
                notStarted.add(.upstream, settings.name, reason: reason, logger: logger)
            }
        }
    }
    monitor.register(notStarted)
    monitor.register(ListenerHealth(listeners: listeners))
    for upstream in upstreams {
        monitor.register(upstream)
    }

    let router = Router()
    router.middlewares.add(LogRequestsMiddleware(.debug))
    HealthController(monitor: monitor).addRoutes(to: router)
    let pairing = nodeID.map { nodeID in
        PairingService(
            listeners: listeners, nodeName: configuration.node.name, nodeID: nodeID, identityIsNew: identityIsNew,
            logger: logger)
    }
    PairingController(pairing: pairing).addRoutes(to: router)
    StatusController(listeners: listeners, upstreams: upstreams).addRoutes(to: router)
    let databases = storeService?.databases ?? []
    let metrics = GatewayMetrics()
    databases.forEach(metrics.observeCommits(of:))
    MetricsController(metrics: metrics, listeners: listeners, upstreams: upstreams, databases: databases)
        .addRoutes(to: router)
    StatusPageController(
        monitor: monitor, nodeID: nodeID, listeners: listeners, upstreams: upstreams, pairing: pairing
    ).addRoutes(to: router)
    let advertisedListeners = listeners.compactMap { listener in
        configuration.listeners.first { $0.name == listener.configuration.name }?.serviceDiscovery.map {
            DiscoveryService.AdvertisedListener(listener: listener, discovery: $0)
        }
    }
    let discovery = nodeID.flatMap { nodeID in
        advertisedListeners.isEmpty
            ? nil : DiscoveryService(listeners: advertisedListeners, nodeID: nodeID, logger: logger)
    }
    if let discovery {
        monitor.register(discovery)
    }

    var application = Application(
        router: router,
        configuration: .init(
            address: .hostname(configuration.ops.address, port: configuration.ops.port),
            serverName: "EdgeGateway/\(EdgeGatewayVersion.current)"
        ),
        onServerRunning: { channel in
            monitor.markReady()
            logger.info(
                "ops endpoint listening",
                metadata: ["address": "\(channel.localAddress.map { "\($0)" } ?? "unknown")"]
            )
        },
        logger: logger
    )
    // The store is listed first so that ServiceLifecycle stops it last: the listeners (and the ops server)
    // stop accepting and drain their sessions before the databases close.
    if let storeService {
        application.addServices(storeService)
    }
    application.addServices(listeners.map { $0 as any Service })
    if let pairing {
        application.addServices(pairing)
    }
    // After the listeners, so that shutdown withdraws the services before the listeners stop accepting.
    if let discovery {
        application.addServices(discovery)
    }
    application.addServices(upstreams.map { $0 as any Service })
    var watches = listeners.filter { !$0.reloadableFiles.isEmpty }.map { listener in
        FileReloadService.Watch(files: listener.reloadableFiles) {
            listener.reloadFiles()
            await discovery?.refreshCertificates()
        }
    }
    for upstream in upstreams {
        guard let trustStore = upstream.trustStoreFile else { continue }
        watches.append(FileReloadService.Watch(files: [trustStore]) { await upstream.reloadTrust() })
    }
    // Even with nothing to watch: it also traps SIGHUP, whose default action would end the gateway.
    application.addServices(FileReloadService(watches: watches, interval: .seconds(1), logger: logger))
    return application
}

/// Why the store could not be opened, in one line with the fix.
struct StoreUnavailable: Error, CustomStringConvertible {
    var description: String
}

/// Checks the data directory before anything in it is touched, then reads or creates the node ID and opens the
/// databases.
private func openStore(
    configuration: GatewayConfiguration, logger: Logger
) async -> Result<(NodeID, StoreService), StoreUnavailable> {
    do {
        try DataDirectoryCheck.requireWritable(configuration.node.dataDirectory)
        let nodeID = try NodeID.loadOrCreate(dataDirectory: configuration.node.dataDirectory)
        logger.info("node ID", metadata: ["id": "\(nodeID)"])
        return .success((nodeID, try await StoreService(configuration: configuration, logger: logger)))
    } catch let error as DataDirectoryError {
        return .failure(StoreUnavailable(description: error.description))
    } catch {
        return .failure(
            StoreUnavailable(
                description: "the data directory \(configuration.node.dataDirectory) cannot be used: \(error); "
                    + DataDirectoryCheck.restartAdvice + " once it is fixed"))
    }
}
