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
/// Everything that can fail on bad input (opening databases, reading identities) happens here, before anything
/// starts listening, so that a misconfigured node exits with one clear error instead of half-starting.
public func buildApplication(
    configuration: GatewayConfiguration,
    logger: Logger
) async throws -> some ApplicationProtocol {
    let monitor = HealthMonitor(nodeName: configuration.node.name)
    try DataDirectoryCheck.requireWritable(configuration.node.dataDirectory)
    let nodeID = try NodeID.loadOrCreate(dataDirectory: configuration.node.dataDirectory)
    logger.info("node ID", metadata: ["id": "\(nodeID)"])
    let storeService = try await StoreService(configuration: configuration, logger: logger)
    monitor.register(storeService)
    let environment = SyncListener.Environment(
        store: storeService.store,
        databases: configuration.databases,
        dataDirectory: configuration.node.dataDirectory,
        nodeName: configuration.node.name,
        serverVersion: EdgeGatewayVersion.current,
        nodeID: nodeID
    )
    let identityIsNew =
        configuration.listeners.contains { $0.tls == .selfSigned }
        && !FileManager.default.fileExists(
            atPath: URL(fileURLWithPath: configuration.node.dataDirectory)
                .appendingPathComponent("identity").appendingPathComponent(TLSIdentity.certificateFileName).path)
    let listeners = try configuration.listeners.map { settings in
        try SyncListener(settings: settings, environment: environment, logger: logger)
    }
    monitor.register(ListenerHealth(listeners: listeners))
    var upstreams: [UpstreamService] = []
    for settings in configuration.upstreams {
        guard let database = storeService.databases.first(where: { $0.name == settings.database }) else { continue }
        let upstream = try await UpstreamService(
            settings: settings, database: database, dataDirectory: configuration.node.dataDirectory, logger: logger)
        monitor.register(upstream)
        upstreams.append(upstream)
    }

    let router = Router()
    router.middlewares.add(LogRequestsMiddleware(.debug))
    HealthController(monitor: monitor).addRoutes(to: router)
    let pairing = PairingService(
        listeners: listeners, nodeName: configuration.node.name, nodeID: nodeID, identityIsNew: identityIsNew,
        logger: logger)
    PairingController(pairing: pairing).addRoutes(to: router)
    StatusController(listeners: listeners, upstreams: upstreams).addRoutes(to: router)
    let metrics = GatewayMetrics()
    storeService.databases.forEach(metrics.observeCommits(of:))
    MetricsController(
        metrics: metrics, listeners: listeners, upstreams: upstreams, databases: storeService.databases
    ).addRoutes(to: router)
    StatusPageController(
        monitor: monitor, nodeID: nodeID, listeners: listeners, upstreams: upstreams, pairing: pairing
    ).addRoutes(to: router)
    let advertisedListeners = listeners.filter { $0.settings.serviceDiscovery != nil }
    let discovery =
        advertisedListeners.isEmpty ? nil : DiscoveryService(listeners: advertisedListeners, nodeID: nodeID, logger: logger)
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
    application.addServices(storeService)
    application.addServices(listeners.map { $0 as any Service })
    application.addServices(pairing)
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

