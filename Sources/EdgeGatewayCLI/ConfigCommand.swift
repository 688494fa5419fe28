import ArgumentParser
import EdgeConfig
import Foundation

struct ConfigCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "config",
        abstract: "Work with configuration files.",
        subcommands: [Check.self]
    )

    struct Check: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Validate a configuration file without starting anything.",
            discussion: "Exits 0 when the file is valid, 2 with one error naming the key, line and allowed values when not."
        )

        @Argument(help: "The TOML file to validate.")
        var file: String

        func run() throws {
            let configuration: GatewayConfiguration
            do {
                configuration = try ConfigurationLoader.load(
                    file: file,
                    environment: ProcessInfo.processInfo.environment,
                    overrides: ConfigurationOverrides()
                )
            } catch {
                printError("\(error)")
                throw ExitCode(2)
            }
            print(
                "\(file): OK (node \"\(configuration.node.name)\", \(configuration.databases.count) database(s), "
                    + "\(configuration.listeners.count) listener(s), \(configuration.upstreams.count) upstream(s))"
            )
        }
    }
}
