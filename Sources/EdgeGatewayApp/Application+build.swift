import EdgeConfig
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle

/// Builds the whole gateway from a validated configuration, ready to run as a service.
///
/// Everything that can fail on bad input (opening databases, reading identities) happens here, before anything
/// starts listening, so that a misconfigured node exits with one clear error instead of half-starting.
public func buildApplication(
    configuration: GatewayConfiguration,
    logger: Logger
) async throws -> some ApplicationProtocol {
    let monitor = HealthMonitor(nodeName: configuration.node.name)
    let storeService = try await StoreService(configuration: configuration, logger: logger)
    monitor.register(storeService)

    let router = Router()
    router.middlewares.add(LogRequestsMiddleware(.debug))
    HealthController(monitor: monitor).addRoutes(to: router)

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
    // Listed first so that ServiceLifecycle stops it last: the servers drain before the databases close.
    application.addServices(storeService)
    return application
}

