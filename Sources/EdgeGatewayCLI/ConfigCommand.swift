import ArgumentParser
import EdgeConfig
import Foundation
import ListenerUsersFile

struct ConfigCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "config",
        abstract: "Work with configuration files.",
        subcommands: [Check.self]
    )

    struct Check: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Validate a configuration file without starting anything.",
            discussion: """
                Exits 0 when the file and the users files it names are valid, 2 with one error naming the file, key, \
                line and allowed values when not. A users file that does not exist yet at its default place in the \
                data directory is valid (nobody was added); one named by users_file must exist. `serve` reports the \
                same missing or unreadable files in /health for the listener or upstream that needs them, and runs \
                the rest.
                """
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
            for listener in configuration.listeners {
                guard case .basic(let usersFile) = listener.authentication else { continue }
                do {
                    if try UsersFile.readForListener(path: usersFile, dataDirectory: configuration.node.dataDirectory)
                        .isEmpty
                    {
                        print(
                            "note: listener \"\(listener.name)\" has no users yet (\(usersFile)); it refuses every "
                                + "client until one is added with `edge-gateway users add NAME`")
                    }
                } catch {
                    printError("\(error)")
                    throw ExitCode(2)
                }
            }
            print(
                "\(file): OK (node \"\(configuration.node.name)\", \(configuration.databases.count) database(s), "
                    + "\(configuration.listeners.count) listener(s), \(configuration.upstreams.count) upstream(s))"
            )
        }
    }
}
