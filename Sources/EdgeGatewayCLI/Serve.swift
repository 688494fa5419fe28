import ArgumentParser
import Foundation
import EdgeGatewayApp
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the gateway until SIGTERM or SIGINT.",
        discussion: """
            Opens the databases, starts the listeners, the upstream replicators and the ops endpoint \
            (/health, /health/live, /health/ready). On SIGTERM or SIGINT it stops accepting, finishes the \
            writes in flight, closes the databases and exits 0.
            """
    )

    @OptionGroup var options: ConfigurationOptions

    func run() async throws {
        let configuration = try options.load()
        LoggingSystem.bootstrap { label in
            LogfmtLogHandler(label: label, level: configuration.node.logLevel)
        }
        let logger = Logger(label: "edge-gateway")
        logger.info(
            "starting",
            metadata: [
                "version": "\(EdgeGatewayVersion.current)",
                "node": "\(configuration.node.name)",
                "config": "\(options.configurationFile ?? "embedded default")",
            ]
        )
        OpenFileLimit.raise(toServe: configuration, logger: logger)
        let application: any ApplicationProtocol
        do {
            application = try await buildApplication(configuration: configuration, logger: logger)
        } catch {
            logger.critical("start-up failed: \(error)")
            throw ExitCode(1)
        }
        do {
            try await application.runService(gracefulShutdownSignals: [.sigterm, .sigint])
        } catch let error as IOError where error.errnoCode == EADDRINUSE {
            // Listeners report their own ports and keep the node up; what reaches here is the ops endpoint.
            let ops = configuration.ops
            let problem =
                "ops port \(ops.port) on \(ops.address) is already in use (is another gateway running on this host?): "
                + "stop it, or set another port with [ops] port or EDGE_GATEWAY_OPS_PORT"
            logger.critical("\(problem)")
            throw ExitCode(1)
        }
        logger.info("stopped")
    }
}
