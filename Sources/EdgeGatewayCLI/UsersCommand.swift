import ArgumentParser
import EdgeConfig
import EdgeCredentials
import Foundation

struct UsersCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "users",
        abstract: "Manage the users file of a listener with auth = \"basic\".",
        discussion: "The file holds scrypt hashes only, and is rewritten atomically with mode 600.",
        subcommands: [Add.self, Remove.self, List.self]
    )

    struct FileOption: ParsableArguments {
        @Option(name: .long, help: ArgumentHelp("The users file (the listener's users_file).", valueName: "file"))
        var file: String

        func readUsers(creatingIfMissing: Bool = false) throws -> [ListenerUser] {
            if creatingIfMissing && !FileManager.default.fileExists(atPath: file) { return [] }
            do {
                return try UsersFile.read(path: file)
            } catch {
                printError("\(error)")
                throw ExitCode(2)
            }
        }

        func write(_ users: [ListenerUser]) throws {
            do {
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
            discussion: "The password comes from --password-file, else it is asked for on the terminal, else read from standard input."
        )

        @Argument(help: "The user name (no ':').") var name: String
        @OptionGroup var users: FileOption
        @Option(name: .customLong("password-file"), help: ArgumentHelp("Read the password from this file.", valueName: "file"))
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
            print(replaced == nil ? "added \(name) to \(users.file)" : "changed the password of \(name) in \(users.file)")
        }

        private func readPassword() throws -> String {
            if let passwordFile {
                guard let text = try? String(contentsOfFile: passwordFile, encoding: .utf8) else {
                    throw ValidationError("cannot read the password file \(passwordFile)")
                }
                return text.trimmingCharacters(in: .newlines)
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
                printError("\(users.file): no user named \"\(name)\"")
                throw ExitCode(1)
            }
            entries.remove(at: index)
            try users.write(entries)
            print("removed \(name) from \(users.file)")
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
