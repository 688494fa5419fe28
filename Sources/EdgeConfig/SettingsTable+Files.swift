import Foundation

/// File-valued settings: paths are resolved against the document's directory and checked at load
/// time, so a wrong path fails at startup with the key that names it, not later in a TLS handshake.
extension SettingsTable {
    /// An absolute path; relative values are resolved against the document's directory.
    func path(_ key: String) throws -> String? {
        try string(key).map(resolve)
    }

    /// The path of a readable regular file.
    func readableFile(_ key: String) throws -> String? {
        guard let path = try path(key) else {
            return nil
        }
        try checkReadable(path, key: key)
        return path
    }

    /// The path of a readable regular file that must be configured; `reason` says why.
    func requiredReadableFile(_ key: String, because reason: String) throws -> String {
        guard let path = try readableFile(key) else {
            throw error(at: key, "missing required key `\(key)` (\(reason))")
        }
        return path
    }

    /// Paths of readable regular files, listed once each.
    func readableFiles(_ key: String) throws -> [String]? {
        guard let values = try uniqueStringArray(key) else {
            return nil
        }
        return try values.enumerated().map { index, value in
            let path = resolve(value)
            try checkReadable(path, key: key, element: index)
            return path
        }
    }

    /// The contents of a secret file, with the trailing line break most editors add removed.
    func secretFile(_ key: String) throws -> Secret? {
        guard let path = try path(key) else {
            return nil
        }
        let contents = try readText(path, key: key)
        var secret = Substring(contents)
        while let last = secret.last, last.isNewline {
            secret = secret.dropLast()
        }
        guard !secret.isEmpty else {
            throw error(at: key, "file \(path) is empty")
        }
        return Secret(String(secret))
    }

    /// The contents of a secret file that must be configured; `reason` says why.
    func requiredSecretFile(_ key: String, because reason: String) throws -> Secret {
        guard let secret = try secretFile(key) else {
            throw error(at: key, "missing required key `\(key)` (\(reason))")
        }
        return secret
    }

    /// The text of a file, for files that are read whole (users files).
    func readText(_ path: String, key: String) throws -> String {
        try checkReadable(path, key: key)
        do {
            return try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw self.error(at: key, "cannot read \(path) as UTF-8 text")
        }
    }

    private func resolve(_ path: String) -> String {
        URL(
            fileURLWithPath: path,
            relativeTo: URL(fileURLWithPath: document.baseDirectory, isDirectory: true)
        )
        .standardizedFileURL.path
    }

    private func checkReadable(_ path: String, key: String, element: Int? = nil) throws {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw error(
                at: key, element: element,
                "file not found: \(path); create it, or correct the path (relative paths are resolved against "
                    + "\(document.baseDirectory)), or remove the key")
        }
        guard !isDirectory.boolValue else {
            throw error(at: key, element: element, "\(path) is a directory, expected a file")
        }
        guard FileManager.default.isReadableFile(atPath: path) else {
            throw error(
                at: key, element: element, "file is not readable (check permissions): \(path)")
        }
    }
}
