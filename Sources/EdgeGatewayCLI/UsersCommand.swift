import ArgumentParser
import EdgeConfig
import EdgeCredentials
import Foundation
import ListenerUsersFile

struct UsersCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "users",
        abstract: "Manage the users file of a listener with auth = \"basic\".",
        discussion: """
            The file holds scrypt hashes only, and is rewritten atomically with mode 600. Without --file, the \
            users file of the configuration's auth = "basic" listener is used (the configuration comes from \
            --config or $EDGE_GATEWAY_CONFIG, as for the gateway itself). A running gateway picks up the change \
            within a second, without a restart.
            """,
        subcommands: [Add.self, Remove.self, List.self]
    )

    struct FileOption: ParsableArguments {
        @Option(
            name: .customLong("file"),
            help: ArgumentHelp(
                "The users file. Defaults to the users file of the configuration's auth = \"basic\" listener.",
                valueName: "file"))
        var explicitFile: String?

        @Option(help: "The listener whose users file to use, when several have auth = \"basic\".")
        var listener: String?

        @OptionGroup var configuration: ConfigurationOptions

        func validate() throws {
            if explicitFile != nil, listener != nil {
                throw ValidationError("--file and --listener are alternatives; give one of them.")
            }
        }

        /// The file named by --file, else the one the configuration's listener names (by default
        /// `<data_dir>/users.toml`).
        var file: String {
            get throws {
                if let explicitFile { return explicitFile }
                // A user can be added while an upstream's password file is still missing; a listener left out for
                // its own files is refused with that problem, since its users_file is not known without it.
                let loaded = try configuration.load(unusableFiles: .disableEntry)
                if let blocked = loaded.unavailableEntries.first(where: {
                    $0.kind == .listener && (listener == nil || $0.name == listener)
                }) {
                    printError("configuration error: \(blocked.problem)")
                    throw ExitCode(2)
                }
                let candidates = loaded.listeners.compactMap { listener -> (name: String, file: String)? in
                    guard case .basic(let usersFile) = listener.authentication else { return nil }
                    return (listener.name, usersFile)
                }
                if let listener {
                    guard let match = candidates.first(where: { $0.name == listener }) else {
                        printError(
                            "no listener named '\(listener)' with auth = \"basic\"; such listeners: "
                                + (candidates.isEmpty ? "none" : candidates.map(\.name).joined(separator: ", ")))
                        throw ExitCode(2)
                    }
                    return match.file
                }
                let files = Set(candidates.map(\.file))
                guard let only = files.first else {
                    printError(
                        "the configuration (\(configuration.configurationFile ?? "embedded default")) has no listener "
                            + "with auth = \"basic\"; name the users file with --file")
                    throw ExitCode(2)
                }
                guard files.count == 1 else {
                    printError(
                        "listeners with different users files: \(candidates.map(\.name).joined(separator: ", ")); "
                            + "choose one with --listener")
                    throw ExitCode(2)
                }
                return only
            }
        }

        func readUsers(creatingIfMissing: Bool = false) throws -> [ListenerUser] {
            let file = try self.file
            if creatingIfMissing && !FileManager.default.fileExists(atPath: file) { return [] }
            do {
                return try UsersFile.read(path: file)
            } catch {
                printError("\(error)")
                throw ExitCode(2)
            }
        }

        func write(_ users: [ListenerUser]) throws {
            let file = try self.file
            do {
                // The default file is in the data directory, which does not exist before the first start.
                let directory = URL(fileURLWithPath: file).deletingLastPathComponent()
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
                try UsersFile.write(users, to: file)
            } catch {
                printError("\(error)")
                throw ExitCode(1)
            }
        }
    }

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add a user, or set a new password for an existing one.",
            discussion:
                "The password comes from --password-file, else it is asked for on the terminal, else read from standard input."
        )

        @Argument(help: "The user name (no ':').") var name: String
        @OptionGroup var users: FileOption
        @Option(
            name: .customLong("password-file"),
            help: ArgumentHelp("Read the password from this file.", valueName: "file"))
        var passwordFile: String?

        func run() throws {
            if let problem = UsersFile.validateName(name) {
                throw ValidationError("user name \"\(name)\" \(problem)")
            }
            let password = try readPassword()
            guard !password.isEmpty else { throw ValidationError("the password must not be empty") }
            var entries = try users.readUsers(creatingIfMissing: true)
            let hash = try PasswordHash.make(password: password)
            let replaced = entries.firstIndex { $0.name == name }
            if let replaced {
                entries[replaced].passwordHash = hash
            } else {
                entries.append(ListenerUser(name: name, passwordHash: hash))
            }
            try users.write(entries)
            let file = try users.file
            print(replaced == nil ? "added \(name) to \(file)" : "changed the password of \(name) in \(file)")
            print("a running gateway takes it into account within a second; no restart needed")
        }

        private func readPassword() throws -> String {
            if let passwordFile {
                return try PasswordFile.read(passwordFile)
            }
            if isatty(STDIN_FILENO) != 0, let entered = getpass("Password for \(name): ") {
                return String(cString: entered)
            }
            return (readLine(strippingNewline: true) ?? "")
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove a user.")

        @Argument(help: "The user name.") var name: String
        @OptionGroup var users: FileOption

        func run() throws {
            var entries = try users.readUsers()
            guard let index = entries.firstIndex(where: { $0.name == name }) else {
                printError("\(try users.file): no user named \"\(name)\"")
                throw ExitCode(1)
            }
            entries.remove(at: index)
            try users.write(entries)
            print("removed \(name) from \(try users.file)")
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the user names (never the hashes).")

        @OptionGroup var users: FileOption

        func run() throws {
            for user in try users.readUsers() {
                print(user.name)
            }
        }
    }
}
