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
        guard checksFiles else {
            // Only the entry's other keys are being checked, and the entry is then discarded: nothing reads
            // this value, and the secret itself is not read.
            return Secret(path)
        }
        let contents = try readText(path, key: key)
        var secret = Substring(contents)
        while let last = secret.last, last.isNewline {
            secret = secret.dropLast()
        }
        guard !secret.isEmpty else {
            throw unusable(path, at: key, "file \(path) is empty")
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
            throw unusable(path, at: key, "cannot read \(path) as UTF-8 text")
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
        guard checksFiles else { return }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw unusable(
                path, at: key, element: element,
                "file not found: \(path); create it, or correct the path (relative paths are resolved against "
                    + "\(document.baseDirectory)), or remove the key")
        }
        guard !isDirectory.boolValue else {
            throw unusable(path, at: key, element: element, "\(path) is a directory, expected a file")
        }
        guard FileManager.default.isReadableFile(atPath: path) else {
            let uid = geteuid()
            throw unusable(
                path, at: key, element: element,
                "file is not readable by the gateway (uid \(uid)): \(path); give it to that user "
                    + "(`chown \(uid) \(path)`, mode 600 for secrets and keys) or make it readable (`chmod a+r`) "
                    + "if it holds nothing secret")
        }
    }

    private func unusable(_ path: String, at key: String, element: Int? = nil, _ message: String)
        -> ConfigurationError
    {
        var problem = error(at: key, element: element, message)
        problem.unusableFile = path
        return problem
    }
}
