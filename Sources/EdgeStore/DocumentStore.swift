import Foundation

/// The node-level store: every database under one data directory, each a SQLite file
/// `<dataDirectory>/databases/<name>.sqlite3` with its blobs in `<name>.blobs/`.
///
/// Opening the same name twice returns the same `DocumentDatabase`, so change observers see
/// every write made through this store.
public actor DocumentStore {
    /// The directory this store owns.
    public nonisolated let dataDirectory: URL
    /// Settings applied to every database.
    public nonisolated let configuration: StoreConfiguration
    private var openDatabases: [String: DocumentDatabase] = [:]

    private var databasesDirectory: URL {
        dataDirectory.appendingPathComponent("databases", isDirectory: true)
    }

    /// Opens (and creates if needed) the data directory.
    public init(dataDirectory: URL, configuration: StoreConfiguration = .init()) throws {
        self.dataDirectory = dataDirectory
        self.configuration = configuration
        let databases = dataDirectory.appendingPathComponent("databases", isDirectory: true)
        do {
            try FileManager.default.createDirectory(
                at: databases, withIntermediateDirectories: true)
        } catch {
            throw StoreError.io(path: databases.path, reason: error.localizedDescription)
        }
    }

    /// Opens a database, creating it when `createIfMissing` (otherwise `StoreError.databaseNotFound`).
    /// `configuration` overrides the store-wide settings for this database; it applies on first open only.
    public func database(
        named name: String,
        configuration databaseConfiguration: StoreConfiguration? = nil,
        createIfMissing: Bool = true
    ) throws -> DocumentDatabase {
        try Self.validateDatabaseName(name)
        if let database = openDatabases[name] { return database }
        let path = databasesDirectory.appendingPathComponent("\(name).sqlite3").path
        guard createIfMissing || FileManager.default.fileExists(atPath: path) else {
            throw StoreError.databaseNotFound(name)
        }
        let database = try DocumentDatabase(
            name: name, path: path,
            blobDirectory: databasesDirectory.appendingPathComponent("\(name).blobs", isDirectory: true),
            configuration: databaseConfiguration ?? configuration)
        openDatabases[name] = database
        return database
    }

    /// Names of the databases present in the data directory, sorted.
    package func databaseNames() throws -> [String] {
        let files: [String]
        do {
            files = try FileManager.default.contentsOfDirectory(atPath: databasesDirectory.path)
        } catch {
            throw StoreError.io(path: databasesDirectory.path, reason: error.localizedDescription)
        }
        return files.compactMap { file in
            guard file.hasSuffix(".sqlite3") else { return nil }
            let name = String(file.dropLast(".sqlite3".count))
            return (try? Self.validateDatabaseName(name)) != nil ? name : nil
        }.sorted()
    }

    /// Database names: 1–100 characters, a lowercase letter first, then lowercase letters, digits,
    /// `_` or `-` (a subset of Sync Gateway's rules that is safe as a file name everywhere).
    package static func validateDatabaseName(_ name: String) throws(StoreError) {
        let utf8 = Array(name.utf8)
        guard let first = utf8.first else {
            throw .invalidDatabaseName(name, reason: "must not be empty")
        }
        guard utf8.count <= 100 else {
            throw .invalidDatabaseName(name, reason: "longer than 100 characters")
        }
        guard first >= UInt8(ascii: "a") && first <= UInt8(ascii: "z") else {
            throw .invalidDatabaseName(name, reason: "must start with a lowercase letter")
        }
        for byte in utf8 {
            let allowed =
                (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
                || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
                || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
            guard allowed else {
                throw .invalidDatabaseName(
                    name, reason: "only lowercase letters, digits, '_' and '-' are allowed")
            }
        }
    }
}
