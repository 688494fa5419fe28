import ArgumentParser
import EdgeConfig
import EdgeGatewayApp
import Foundation
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

            A listener or upstream whose certificate, key, CA or secret file is missing or unreadable, or a data \
            directory the gateway cannot write, does not stop the node: that part is reported down by /health \
            with the fix, and the rest serves. It exits non-zero with one error only when the configuration \
            file itself is invalid (exit 2) or the ops port cannot be bound (exit 1).
            """
    )

    @OptionGroup var options: ConfigurationOptions

    func run() async throws {
        let configuration = try options.load(unusableFiles: .disableEntry)
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
        HeapArenaLimit.apply()
        let application: any ApplicationProtocol
        do {
            application = try await buildApplication(configuration: configuration, logger: logger)
        } catch let error as OpsPortUnavailableError {
            logger.critical("\(error)")
            throw ExitCode(1)
        } catch {
            logger.critical("start-up failed: \(error)")
            throw ExitCode(1)
        }
        let heapTrim = Task { await HeapTrim.run() }
        defer { heapTrim.cancel() }
        do {
            try await application.runService(gracefulShutdownSignals: [.sigterm, .sigint])
        } catch let error as IOError where error.errnoCode == EADDRINUSE {
            // Listeners report their own ports and keep the node up; what reaches here is the ops endpoint, taken
            // after buildApplication checked it.
            let ops = configuration.ops
            logger.critical("\(OpsPortUnavailableError(address: ops.address, port: ops.port, cause: .inUse))")
            throw ExitCode(1)
        }
        logger.info("stopped")
    }
}
