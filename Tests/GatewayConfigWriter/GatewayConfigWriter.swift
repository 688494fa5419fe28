import ArgumentParser
import GatewayConfigurationFile

/// Prints a gateway configuration file built by the same `GatewayTOML` the tests use, so that the scripts
/// (load runs, REST benchmark, browser test) start gateways on files written one way.
@main
struct GatewayConfigWriter: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Print a gateway configuration file for a test run.")

    @Option(help: "[node] name.")
    var name = "test-node"

    @Option(help: "[node] data_dir.")
    var dataDir: String?

    @Option(help: "[node] log_level.")
    var logLevel: String?

    @Option(help: "[ops] port on 127.0.0.1; without it the file has no [ops] section.")
    var opsPort: Int?

    @Option(help: "A [[database]] (repeat for more).")
    var database: [String] = ["inventory"]

    @Option(help: "Adds a [[listener]] on 127.0.0.1 at this port, serving every database.")
    var listenerPort: Int?

    @Option(help: "The listener's name.")
    var listenerName = "lan"

    @Option(help: "The listener's tls.")
    var tls = "off"

    @Option(help: "The listener's auth.")
    var auth = "none"

    @Option(help: "The listener's users_file.")
    var usersFile: String?

    @Option(help: "Another key of the listener, as key=value (an integer or true/false is written as such).")
    var listenerSetting: [String] = []

    func run() throws {
        var file = GatewayTOML(name: name, dataDirectory: dataDir, opsPort: opsPort, databases: database)
        file.node["log_level"] = logLevel.map(GatewayTOML.Value.string)
        if let listenerPort {
            var listener = GatewayTOML.listener(
                name: listenerName, port: listenerPort, tls: tls, auth: auth, usersFile: usersFile,
                databases: database)
            for setting in listenerSetting {
                guard let separator = setting.firstIndex(of: "=") else {
                    throw ValidationError("--listener-setting \(setting): expected key=value")
                }
                listener[String(setting[..<separator])] = GatewayTOML.Value(
                    parsing: String(setting[setting.index(after: separator)...]))
            }
            file.listeners = [listener]
        } else if !listenerSetting.isEmpty {
            throw ValidationError("--listener-setting needs --listener-port")
        }
        print(file, terminator: "")
    }
}

extension GatewayTOML.Value {
    /// A command-line value: an integer or a boolean where it reads as one, a string otherwise.
    init(parsing text: String) {
        if let number = Int(text) {
            self = .integer(number)
        } else if let flag = Bool(text) {
            self = .boolean(flag)
        } else {
            self = .string(text)
        }
    }
}
