extension ListenerUser {
    /// Loads the users file a listener's `users_file` names:
    ///
    /// ```toml
    /// [[user]]
    /// name = "alice"
    /// password = "…"
    /// ```
    ///
    /// Passwords are stored as given, because the file itself is the secret (keep it mode 0600,
    /// like `password_file`); the main configuration then holds no secrets and can be shared.
    static func loadUsersFile(referencedBy listener: SettingsTable, key: String) throws
        -> [ListenerUser]
    {
        guard let path = try listener.path(key) else {
            throw listener.error(at: key, "missing required key `\(key)`")
        }
        let text = try listener.readText(path, key: key)
        let (_, root) = try ConfigurationDocument.parse(
            text,
            name: path,
            baseDirectory: listener.document.baseDirectory
        )
        try root.rejectUnknownKeys(allowed: ["user"])
        var users: [ListenerUser] = []
        for var table in try root.arrayOfTables("user") {
            try table.rejectUnknownKeys(allowed: ["name", "password"])
            let name = try table.requiredString("name")
            // Basic credentials are `name:password`, split at the first colon.
            guard !name.contains(":") else {
                throw table.error(
                    at: "name",
                    "must not contain ':' (HTTP Basic separates name and password with it)")
            }
            if users.contains(where: { $0.name == name }) {
                throw table.error(at: "name", "duplicate user name \"\(name)\"")
            }
            table.displayName = "user \"\(name)\""
            users.append(
                ListenerUser(name: name, password: Secret(try table.requiredString("password"))))
        }
        guard !users.isEmpty else {
            throw listener.error(at: key, "\(path) defines no [[user]], so nobody could connect")
        }
        return users
    }
}
