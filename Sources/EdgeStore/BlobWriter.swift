import Crypto
import Foundation
import SyncIdentifiers

/// Streams one blob into the store: append chunks, then `finish` (or `cancel`). Use it from one
/// task at a time. An unfinished writer deletes its temporary file when released.
package final class BlobWriter {
    private let store: BlobStore
    private let temporaryURL: URL
    private var handle: FileHandle?
    private var hasher = Insecure.SHA1()
    /// Bytes appended so far.
    package private(set) var length: Int64 = 0

    init(store: BlobStore) throws {
        self.store = store
        temporaryURL = store.temporaryDirectory.appendingPathComponent(UUID().uuidString)
        guard FileManager.default.createFile(atPath: temporaryURL.path, contents: nil),
            let handle = FileHandle(forWritingAtPath: temporaryURL.path)
        else {
            throw StoreError.io(
                path: temporaryURL.path, reason: "cannot create temporary blob file")
        }
        self.handle = handle
    }

    deinit {
        if handle != nil { discard() }
    }

    /// Appends the next chunk of content.
    package func append(_ chunk: Data) throws {
        guard let handle else { throw StoreError.blobWriterClosed }
        do {
            try handle.write(contentsOf: chunk)
        } catch {
            discard()
            throw store.diskFullState.record(StoreError.io(path: temporaryURL.path, error: error))
        }
        hasher.update(data: chunk)
        length += Int64(chunk.count)
    }

    /// Verifies the content against `expectedDigest` (if given) and installs the blob durably.
    /// On a mismatch nothing is stored and `StoreError.blobDigestMismatch` is thrown.
    @discardableResult
    package func finish(expectedDigest: BlobDigest? = nil) throws -> BlobDigest {
        guard let handle else { throw StoreError.blobWriterClosed }
        let digest = BlobDigest(sha1: hasher.finalize())
        do {
            try handle.synchronize()
            try handle.close()
        } catch {
            discard()
            throw store.diskFullState.record(StoreError.io(path: temporaryURL.path, error: error))
        }
        self.handle = nil
        if let expectedDigest, expectedDigest != digest {
            try? FileManager.default.removeItem(at: temporaryURL)
            throw StoreError.blobDigestMismatch(
                expected: expectedDigest.description, actual: digest.description)
        }
        let destination = store.url(for: digest)
        // rename(2) atomically replaces an identical blob that may already be there.
        guard rename(temporaryURL.path, destination.path) == 0 else {
            let failure = errno
            try? FileManager.default.removeItem(at: temporaryURL)
            throw store.diskFullState.record(
                failure == ENOSPC
                    ? .diskFull(path: destination.path)
                    : .io(path: destination.path, reason: String(cString: strerror(failure))))
        }
        try store.syncDirectory()
        store.diskFullState.recordSuccess()
        return digest
    }

    /// Abandons the blob; nothing is stored.
    package func cancel() {
        discard()
    }

    private func discard() {
        try? handle?.close()
        handle = nil
        try? FileManager.default.removeItem(at: temporaryURL)
    }
}
