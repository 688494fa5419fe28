import Foundation
import SyncIdentifiers

/// Content-addressed blob files of one database, `<hex sha1>.blob` in its blob directory.
///
/// Blobs are written to a temporary file, verified, fsynced and renamed into place, so a blob
/// file is either absent or complete and correct.
package final class BlobStore: Sendable {
    /// The directory holding the blob files.
    package let directory: URL
    let temporaryDirectory: URL
    /// Shared with the database the blobs belong to: a blob refused for space degrades the whole store.
    let diskFullState = DiskFullState()

    init(directory: URL) throws(StoreError) {
        self.directory = directory
        self.temporaryDirectory = directory.appendingPathComponent("tmp", isDirectory: true)
        do {
            try FileManager.default.createDirectory(
                at: temporaryDirectory, withIntermediateDirectories: true)
        } catch {
            throw .io(path: temporaryDirectory.path, reason: error.localizedDescription)
        }
    }

    /// Starts writing a blob whose content will be appended in chunks.
    package func makeWriter() throws -> BlobWriter {
        try BlobWriter(store: self)
    }

    /// Stores `content` in one go; see `BlobWriter.finish(expectedDigest:)`.
    @discardableResult
    package func write(_ content: Data, expectedDigest: BlobDigest? = nil) throws -> BlobDigest {
        let writer = try makeWriter()
        try writer.append(content)
        return try writer.finish(expectedDigest: expectedDigest)
    }

    /// Whether a blob is stored.
    package func contains(_ digest: BlobDigest) -> Bool {
        FileManager.default.fileExists(atPath: url(for: digest).path)
    }

    /// The size of a stored blob in bytes, or `nil` if it is not stored.
    package func length(of digest: BlobDigest) -> Int64? {
        let attributes = try? FileManager.default.attributesOfItem(atPath: url(for: digest).path)
        return (attributes?[.size] as? NSNumber)?.int64Value
    }

    /// The content of a blob as a sequence of chunks of at most `chunkSize` bytes.
    package func chunks(of digest: BlobDigest, chunkSize: Int = 64 * 1024) throws -> BlobChunks {
        precondition(chunkSize > 0, "chunk size must be positive")
        guard let handle = FileHandle(forReadingAtPath: url(for: digest).path) else {
            throw StoreError.blobNotFound(digest: digest.description)
        }
        return BlobChunks(handle: handle, chunkSize: chunkSize, path: url(for: digest).path)
    }

    /// The whole content of a blob; meant for small blobs.
    package func read(_ digest: BlobDigest) throws -> Data {
        guard let data = FileManager.default.contents(atPath: url(for: digest).path) else {
            throw StoreError.blobNotFound(digest: digest.description)
        }
        return data
    }

    /// Digests of every stored blob, with the time each file was last written.
    func storedBlobs() throws -> [(digest: BlobDigest, modified: Date)] {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        } catch {
            throw StoreError.io(path: directory.path, reason: error.localizedDescription)
        }
        return names.compactMap { name in
            guard let digest = BlobDigest(fileName: name) else { return nil }
            let attributes = try? FileManager.default.attributesOfItem(
                atPath: url(for: digest).path)
            return (digest, attributes?[.modificationDate] as? Date ?? .distantPast)
        }
    }

    /// Temporary files left by writers that never finished (for instance after a crash).
    func abandonedTemporaryFiles(olderThan cutoff: Date) -> [URL] {
        let names =
            (try? FileManager.default.contentsOfDirectory(atPath: temporaryDirectory.path)) ?? []
        return names.map { temporaryDirectory.appendingPathComponent($0) }.filter { url in
            let attributes = try? FileManager.default.attributesOfItem(atPath: url.path)
            return (attributes?[.modificationDate] as? Date ?? .distantPast) < cutoff
        }
    }

    func remove(_ digest: BlobDigest) throws {
        do {
            try FileManager.default.removeItem(at: url(for: digest))
        } catch {
            throw StoreError.io(path: url(for: digest).path, reason: error.localizedDescription)
        }
    }

    func url(for digest: BlobDigest) -> URL {
        directory.appendingPathComponent(digest.fileName, isDirectory: false)
    }

    /// Makes a rename in `directory` durable.
    func syncDirectory() throws {
        let descriptor = open(directory.path, O_RDONLY)
        guard descriptor >= 0 else {
            throw StoreError.io(path: directory.path, reason: "cannot open directory")
        }
        defer { close(descriptor) }
        guard fsync(descriptor) == 0 else {
            throw StoreError.io(path: directory.path, reason: "fsync failed")
        }
    }
}

/// The chunks of one blob, read lazily from its file.
package struct BlobChunks: AsyncSequence {
    package typealias Element = Data

    let handle: FileHandle
    let chunkSize: Int
    let path: String

    package func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(handle: handle, chunkSize: chunkSize, path: path)
    }

    package struct AsyncIterator: AsyncIteratorProtocol {
        let handle: FileHandle
        let chunkSize: Int
        let path: String
        var finished = false

        package mutating func next() async throws -> Data? {
            guard !finished else { return nil }
            let chunk: Data?
            do {
                chunk = try handle.read(upToCount: chunkSize)
            } catch {
                throw StoreError.io(path: path, reason: error.localizedDescription)
            }
            guard let chunk, !chunk.isEmpty else {
                finished = true
                try? handle.close()
                return nil
            }
            return chunk
        }
    }
}
