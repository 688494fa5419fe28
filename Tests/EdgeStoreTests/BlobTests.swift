import Foundation
import SyncIdentifiers
import Testing

@testable import EdgeStore

@Suite("Blobs")
struct BlobTests {
    @Test("Blob files are named by the digest in hex, and only such names are read back as digests")
    func fileNames() throws {
        let digest = try BlobDigest("sha1-2jmj7l5rSw0yVb/vlWAYkK/YBwk=")
        #expect(digest.fileName == "da39a3ee5e6b4b0d3255bfef95601890afd80709.blob")
        #expect(BlobDigest(fileName: digest.fileName) == digest)
        for name in [
            "da39a3ee5e6b4b0d3255bfef95601890afd80709", "da39a3ee5e6b4b0d3255bfef95601890afd807.blob",
            "zz39a3ee5e6b4b0d3255bfef95601890afd80709.blob", "0123.tmp",
            // Names this store never writes: the same digest in uppercase, and a sign UInt8(_:radix:) would take.
            "DA39A3EE5E6B4B0D3255BFEF95601890AFD80709.blob", "+a39a3ee5e6b4b0d3255bfef95601890afd80709.blob",
        ] {
            #expect(BlobDigest(fileName: name) == nil)
        }
    }

    @Test("Streaming write, then streaming read in chunks")
    func streaming() async throws {
        try await withDatabase { database in
            let content = Data((0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
            let writer = try database.blobs.makeWriter()
            for start in stride(from: 0, to: content.count, by: 7_000) {
                try writer.append(content[start..<min(start + 7_000, content.count)])
            }
            let digest = try writer.finish(expectedDigest: BlobDigest(of: content))
            #expect(throws: StoreError.blobWriterClosed) { try writer.append(Data([1])) }
            #expect(database.blobs.contains(digest))
            #expect(database.blobs.length(of: digest) == 100_000)

            var chunks: [Data] = []
            for try await chunk in try database.blobs.chunks(of: digest, chunkSize: 16_384) {
                chunks.append(chunk)
            }
            #expect(chunks.count == 7)
            #expect(chunks.dropLast().allSatisfy { $0.count == 16_384 })
            #expect(chunks.reduce(Data(), +) == content)
            #expect(try database.blobs.read(digest) == content)
        }
    }

    @Test("A blob whose content does not match its digest is rejected and not stored")
    func badDigest() async throws {
        try await withDatabase { database in
            let claimed = BlobDigest(of: json("the real content"))
            let error = await storeError {
                try database.blobs.write(json("tampered content"), expectedDigest: claimed)
            }
            #expect(
                error
                    == .blobDigestMismatch(
                        expected: claimed.description,
                        actual: BlobDigest(of: json("tampered content")).description))
            #expect(!database.blobs.contains(claimed))
            #expect(!database.blobs.contains(BlobDigest(of: json("tampered content"))))
            let leftovers = try FileManager.default.contentsOfDirectory(
                atPath: database.blobs.temporaryDirectory.path)
            #expect(leftovers.isEmpty)
            let missing = await storeError { _ = try database.blobs.chunks(of: claimed) }
            #expect(missing == .blobNotFound(digest: claimed.description))
            #expect(database.blobs.length(of: claimed) == nil)
        }
    }

    @Test("Garbage collection keeps referenced blobs and deletes the rest")
    func garbageCollection() async throws {
        try await withDatabase(configuration: .init(bodyRetention: .init(maxAncestorDistance: 0))) {
            database in
            let photo = try database.blobs.write(json("photo bytes"))
            let legacy = try database.blobs.write(json("legacy attachment"))
            let orphan = try database.blobs.write(json("nobody uses me"))
            let replaced = try database.blobs.write(json("old version"))

            let body = """
                {"photo":{"@type":"blob","digest":"\(photo)","length":11},
                 "_attachments":{"notes.txt":{"digest":"\(legacy)","length":17,"stub":true}}}
                """
            try await database.save("doc", body: json(body), parentRevID: nil)
            let first = try await database.save(
                "other", body: json(#"{"a":{"@type":"blob","digest":"\#(replaced)"}}"#),
                parentRevID: nil)
            #expect(try await database.isBlobReferenced(replaced))
            // The new revision drops the blob; with no ancestor bodies retained, nothing references it.
            try await database.save("other", body: json(#"{"a":null}"#), parentRevID: first.revID)
            #expect(try await database.isBlobReferenced(replaced) == false)

            // Within the grace period nothing is collected.
            #expect(try await database.collectGarbageBlobs() == 0)
            #expect(try await database.collectGarbageBlobs(gracePeriod: .zero) == 2)
            #expect(database.blobs.contains(photo))
            #expect(database.blobs.contains(legacy))
            #expect(!database.blobs.contains(orphan))
            #expect(!database.blobs.contains(replaced))

            try await database.purge("doc")
            #expect(try await database.collectGarbageBlobs(gracePeriod: .zero) == 2)
            #expect(!database.blobs.contains(photo))
        }
    }
}
