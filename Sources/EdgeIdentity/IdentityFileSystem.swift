#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The few file operations identities need, with the guarantees that matter for key material:
/// files are created with their final permissions (never briefly world-readable) and replaced atomically.
enum IdentityFileSystem {
    static func fileExists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }

    static func readFile(_ path: String) throws(IdentityError) -> [UInt8] {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw .fileUnreadable(path: path, reason: Self.errnoDescription())
        }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            throw .fileUnreadable(path: path, reason: Self.errnoDescription())
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            throw .fileUnreadable(path: path, reason: "not a regular file")
        }
        var contents: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw .fileUnreadable(path: path, reason: Self.errnoDescription())
            }
            if count == 0 { return contents }
            contents.append(contentsOf: chunk[0..<count])
        }
    }

    /// The permission bits of a file (e.g. `0o600`).
    static func permissions(of path: String) throws(IdentityError) -> UInt16 {
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw .fileUnreadable(path: path, reason: Self.errnoDescription())
        }
        return UInt16(info.st_mode & 0o7777)
    }

    /// Creates `path` (and missing parents) with mode 0700; an existing directory is left as it is.
    static func createDirectory(_ path: String) throws(IdentityError) {
        var info = stat()
        if stat(path, &info) == 0 {
            guard (info.st_mode & S_IFMT) == S_IFDIR else {
                throw .directoryNotCreatable(
                    path: path,
                    reason: "a file that is not a directory is in the way"
                )
            }
            return
        }
        let parent = Self.parentDirectory(of: path)
        if parent != path, !parent.isEmpty, !Self.fileExists(parent) {
            try Self.createDirectory(parent)
        }
        guard mkdir(path, 0o700) == 0 || errno == EEXIST else {
            throw .directoryNotCreatable(path: path, reason: Self.errnoDescription())
        }
    }

    /// Writes `contents` to a temporary file next to `path` with `mode`, flushes it, then renames it over
    /// `path`, so a crash leaves either the old file or the complete new one.
    static func writeAtomically(_ contents: [UInt8], to path: String, mode: mode_t)
        throws(IdentityError)
    {
        let temporaryPath = try Self.writeTemporary(contents, besides: path, mode: mode)
        try Self.moveItem(temporaryPath, to: path)
    }

    /// Writes `contents` to a new, flushed temporary file next to `path` and returns its path.
    static func writeTemporary(_ contents: [UInt8], besides path: String, mode: mode_t)
        throws(IdentityError) -> String
    {
        let temporaryPath = "\(path).tmp-\(UInt32.random(in: 0...UInt32.max))"
        let descriptor = open(temporaryPath, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard descriptor >= 0 else {
            throw .fileNotWritable(path: path, reason: Self.errnoDescription())
        }
        var failure: String?
        contents.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    failure = Self.errnoDescription()
                    return
                }
                offset += written
            }
        }
        if failure == nil, fsync(descriptor) != 0 {
            failure = Self.errnoDescription()
        }
        close(descriptor)
        if let failure {
            unlink(temporaryPath)
            throw .fileNotWritable(path: path, reason: failure)
        }
        return temporaryPath
    }

    static func moveItem(_ source: String, to destination: String) throws(IdentityError) {
        guard rename(source, destination) == 0 else {
            throw .fileNotWritable(path: destination, reason: Self.errnoDescription())
        }
        Self.syncDirectory(containing: destination)
    }

    static func remove(_ path: String) {
        unlink(path)
    }

    /// Makes a completed rename durable; failure only weakens durability, so it is not an error.
    private static func syncDirectory(containing path: String) {
        let descriptor = open(Self.parentDirectory(of: path), O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        _ = fsync(descriptor)
        close(descriptor)
    }

    static func parentDirectory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    private static func errnoDescription() -> String {
        String(cString: strerror(errno))
    }
}
