import EdgeConfig
import EdgeCredentials
import Foundation

/// The users file a listener's `users_file` names:
///
/// ```toml
/// [[user]]
/// name = "alice"
/// password_hash = "$scrypt$ln=15,r=8,p=1$…$…"
/// ```
///
/// Only scrypt hashes are stored, never passwords; `edge-gateway users add` writes them.
package enum UsersFile {
    /// Reads and validates a users file; `nil` when there is no file at `path` (no user was added yet).
    package static func readIfPresent(path: String) throws -> [ListenerUser]? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        return try read(path: path)
    }

    /// Reads the users file of an `auth = "basic"` listener. Where the file does not exist yet depends on where it
    /// is: at its default place in the data directory nobody was added yet (no users); elsewhere (`users_file`) it
    /// is a file the operator provides, so its absence is a mistake (a wrong path, a missing mount) to report.
    package static func readForListener(path: String, dataDirectory: String) throws -> [ListenerUser] {
        if let users = try readIfPresent(path: path) {
            return users
        }
        let defaultPath = URL(fileURLWithPath: dataDirectory).appendingPathComponent(
            ListenerSettings.defaultUsersFileName
        ).standardizedFileURL.path
        guard URL(fileURLWithPath: path).standardizedFileURL.path == defaultPath else {
            throw ConfigurationError(
                source: path,
                message: "the users file (users_file) does not exist: create it with `edge-gateway users add NAME`, "
                    + "or correct users_file (without it the users file is \(defaultPath))")
        }
        return []
    }

    /// Reads and validates a users file.
    package static func read(path: String) throws -> [ListenerUser] {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue {
            throw ConfigurationError(source: path, message: "is a directory, expected the users file")
        }
        guard FileManager.default.isReadableFile(atPath: path) || !FileManager.default.fileExists(atPath: path) else {
            throw ConfigurationError(
                source: path,
                message: "the users file is not readable by the gateway (uid \(getuid())): give it to that user "
                    + "(`chown \(getuid()) \(path)`, mode 600), or write it with `edge-gateway users add` run as "
                    + "that user")
        }
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw ConfigurationError(source: path, message: "cannot read the users file: \(error.localizedDescription)")
        }
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
        let (_, root) = try ConfigurationDocument.parse(text, name: path, baseDirectory: directory)
        return try users(in: root)
    }

    /// Writes `users` atomically, readable by the owner only: the hashes are still worth protecting.
    package static func write(_ users: [ListenerUser], to path: String) throws {
        let data = Data(render(users).utf8)
        let url = URL(fileURLWithPath: path)
        let temporary = url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).tmp")
        guard
            FileManager.default.createFile(
                atPath: temporary.path, contents: data, attributes: [.posixPermissions: 0o600])
        else {
            throw ConfigurationError(source: path, message: "cannot write \(temporary.path)")
        }
        guard rename(temporary.path, path) == 0 else {
            let reason = String(cString: strerror(errno))
            try? FileManager.default.removeItem(at: temporary)
            throw ConfigurationError(source: path, message: "cannot replace the users file: \(reason)")
        }
    }

    package static func render(_ users: [ListenerUser]) -> String {
        var text = """
            # Users of a listener with auth = "basic". Written by `edge-gateway users add|remove`.
            # Only scrypt hashes are stored; keep the file readable by the gateway alone (mode 600).

            """
        for user in users {
            text += "\n[[user]]\nname = \"\(user.name)\"\npassword_hash = \"\(user.passwordHash)\"\n"
        }
        return text
    }

    /// Checks a user name the way the file's reader does.
    package static func validateName(_ name: String) -> String? {
        if name.isEmpty { return "must not be empty" }
        // Basic credentials are `name:password`, split at the first colon.
        if name.contains(":") { return "must not contain ':' (HTTP Basic separates name and password with it)" }
        if name.contains(where: { $0 == "\"" || $0 == "\\" || $0.isNewline }) {
            return "must not contain quotes, backslashes or line breaks"
        }
        return nil
    }

    static func users(in root: SettingsTable) throws -> [ListenerUser] {
        try root.rejectUnknownKeys(allowed: ["user"])
        var users: [ListenerUser] = []
        for var table in try root.arrayOfTables("user") {
            if table.contains("password") {
                throw table.error(
                    at: "password",
                    "plain passwords are not accepted; store a hash with `edge-gateway users add NAME`"
                )
            }
            try table.rejectUnknownKeys(allowed: ["name", "password_hash"])
            let name = try table.requiredString("name")
            if let problem = validateName(name) {
                throw table.error(at: "name", problem)
            }
            if users.contains(where: { $0.name == name }) {
                throw table.error(at: "name", "duplicate user name \"\(name)\"")
            }
            table.displayName = "user \"\(name)\""
            let hash: PasswordHash
            do {
                hash = try PasswordHash(parsing: try table.requiredString("password_hash"))
            } catch let error as PasswordHash.ParseError {
                throw table.error(at: "password_hash", error.description)
            }
            users.append(ListenerUser(name: name, passwordHash: hash))
        }
        return users
    }
}
