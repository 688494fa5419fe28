import EdgeConfig
import EdgeGatewayApp
import Foundation
import Hummingbird
import Logging

// What `edge-gateway serve` runs, built by the same `buildApplication`, in a process that valgrind can follow:
// `serve` has Swift's async `main`, which ends the main thread in `dispatch_main`, and valgrind 3.19 stops there
// with an internal SIGSEGV. Here the main thread starts the application in a task and waits for it instead.
// `scripts/perf/instructions` counts this process's instructions under callgrind.
//
//   CountedGateway <configuration file>

guard CommandLine.arguments.count == 2 else {
    FileHandle.standardError.write(Data("usage: CountedGateway <configuration file>\n".utf8))
    exit(2)
}
let configuration: GatewayConfiguration
do {
    configuration = try ConfigurationLoader.load(
        file: CommandLine.arguments[1], environment: ProcessInfo.processInfo.environment)
} catch {
    FileHandle.standardError.write(Data("configuration error: \(error)\n".utf8))
    exit(2)
}
var logger = Logger(label: "counted-gateway")
logger.logLevel = configuration.node.logLevel
let stopped = DispatchSemaphore(value: 0)
// Detached: a task started here would belong to the main actor, whose thread waits below.
Task.detached { [logger] in
    defer { stopped.signal() }
    do {
        let application = try await buildApplication(configuration: configuration, logger: logger)
        try await application.runService(gracefulShutdownSignals: [.sigterm, .sigint])
    } catch {
        logger.critical("stopped: \(error)")
        exit(1)
    }
}
stopped.wait()
