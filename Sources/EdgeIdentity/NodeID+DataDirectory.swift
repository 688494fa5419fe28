import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

extension NodeID {
    /// The file in the data directory that holds the ID.
    package static let fileName = "node-id"

    package static func filePath(dataDirectory: String) -> String {
        (dataDirectory as NSString).appendingPathComponent(fileName)
    }

    /// Reads `<dataDirectory>/node-id`, or generates and stores a new ID when the file does not exist yet.
    ///
    /// An existing file that cannot be read or does not hold a UUID is an error, never silently replaced.
    package static func loadOrCreate(dataDirectory: String) throws(NodeIDError) -> NodeID {
        let path = filePath(dataDirectory: dataDirectory)
        if let existing = try load(path: path) {
            return existing
        }
        let created = NodeID(uuid: UUID())
        try create(created, path: path, dataDirectory: dataDirectory)
        // Another process (a `pair` next to a starting gateway) may have created it first; the file wins.
        return try load(path: path) ?? created
    }

    /// The ID already stored in the data directory, if any; reads only, so it is safe on a directory the gateway
    /// must not change.
    package static func existing(dataDirectory: String) throws(NodeIDError) -> NodeID? {
        try load(path: filePath(dataDirectory: dataDirectory))
    }

    /// The ID in `path`, or nil when there is no such file.
    static func load(path: String) throws(NodeIDError) -> NodeID? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            if errno == ENOENT { return nil }
            throw .unreadable(path: path, reason: errnoDescription())
        }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            throw .unreadable(path: path, reason: "not a regular file")
        }
        // The file holds 37 bytes; anything much longer is not an ID.
        var buffer = [UInt8](repeating: 0, count: 128)
        var count = 0
        while count < buffer.count {
            let result = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress! + count, $0.count - count) }
            if result < 0 {
                if errno == EINTR { continue }
                throw .unreadable(path: path, reason: errnoDescription())
            }
            if result == 0 { break }
            count += result
        }
        guard let text = String(validating: buffer[..<count], as: UTF8.self),
            let id = NodeID(canonical: text.trimmingCharacters(in: .newlines))
        else {
            throw .corrupt(path: path)
        }
        return id
    }

    /// Writes a complete file under a temporary name and links it into place, so that a crash never leaves a
    /// partial ID and a concurrent creator never has its ID overwritten.
    private static func create(_ id: NodeID, path: String, dataDirectory: String) throws(NodeIDError) {
        do {
            try FileManager.default.createDirectory(
                atPath: dataDirectory, withIntermediateDirectories: true, attributes: nil)
        } catch {
            throw .notWritable(path: path, reason: (error as NSError).localizedDescription)
        }
        let temporaryPath = "\(path).tmp-\(UInt32.random(in: 0...UInt32.max))"
        let descriptor = open(temporaryPath, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw .notWritable(path: path, reason: errnoDescription())
        }
        defer { unlink(temporaryPath) }
        let bytes = Array("\(id)\n".utf8)
        let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        // open() applies the umask; the file is not secret, and peers' tooling may read it.
        let failure: String? =
            if written != bytes.count { errnoDescription() } else if fchmod(descriptor, 0o644) != 0 {
                errnoDescription()
            } else if fsync(descriptor) != 0 { errnoDescription() } else { nil }
        close(descriptor)
        if let failure {
            throw .notWritable(path: path, reason: failure)
        }
        // link() fails with EEXIST instead of replacing, unlike rename().
        guard link(temporaryPath, path) == 0 || errno == EEXIST else {
            throw .notWritable(path: path, reason: errnoDescription())
        }
        let directory = open(dataDirectory, O_RDONLY | O_CLOEXEC)
        if directory >= 0 {
            _ = fsync(directory)
            close(directory)
        }
    }

    private static func errnoDescription() -> String {
        String(cString: strerror(errno))
    }
}
