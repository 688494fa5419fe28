import BLIPCodec
import EdgeGatewayTestSupport
import EdgeStore
import Foundation
import ReplicationProtocol
import SyncIdentifiers
import Testing

@Suite("Passive peer protocol details")
struct ProtocolEdgeTests {
    @Test("unknown profiles get BLIP/404; filters and version vectors are refused like LiteCore")
    func refusals() async throws {
        try await TestGateway.run { gateway in
            try await ActivePeer.connect(port: gateway.port) { peer in
                do {
                    _ = try await peer.connection.sendRequest(.request(profile: "allDocs"))
                    Issue.record("an unknown profile was answered")
                } catch let error as BLIPErrorReply {
                    #expect(error.domain == "BLIP" && error.code == 404)
                }
                let filtered = try await peer.errorReply(
                    for: SubChangesRequest(filter: SubChangesRequest.channelFilter, channels: ["a"]))
                #expect(filtered?.domain == "LiteCore" && filtered?.code == 19)
                let vectors = try await peer.errorReply(for: SubChangesRequest(versioning: .versionVectors))
                #expect(vectors?.domain == "LiteCore" && vectors?.code == 501)
                let badSince = try await peer.errorReply(for: SubChangesRequest(since: "12::34"))
                #expect(badSince?.code == 400)
            }
        }
    }

    @Test("a pulled blob is served with getAttachment and proven with proveAttachment")
    func blobPull() async throws {
        let content = Data("hello, blob".utf8)
        let digest = BlobDigest(of: content)
        try await TestGateway.run { gateway in
            let database = try await gateway.database
            _ = try database.blobs.write(content)
            let body =
                #"{"file":{"@type":"blob","digest":"\#(digest.description)","length":\#(content.count),"content_type":"text/plain"}}"#
            try await database.save("blob-doc", body: Data(body.utf8), parentRevID: nil)
            let recorder = PullRecorder()
            try await ActivePeer.connect(port: gateway.port, configure: { await recorder.install(on: $0) }) { peer in
                try await peer.send(SubChangesRequest())
                try await eventually("the rev") { await recorder.revisions.count == 1 }
                let rev = try #require(await recorder.revisions.first)
                let references = try BlobReference.references(in: try rev.bodyObject())
                #expect(references.map(\.digest) == [digest], "blobs: true means no _attachments stand-ins")

                let fetched = try await peer.connection.sendRequest(
                    ActivePeer.message(GetAttachmentRequest(digest: digest, docID: "blob-doc", compress: true)))
                #expect(Data(fetched.body) == content)
                let nonce: [UInt8] = Array(repeating: 7, count: 20)
                let proof = try await peer.send(
                    ProveAttachmentRequest(digest: digest, nonce: nonce), expecting: ProveAttachmentReply.self)
                #expect(proof.verifies(nonce: nonce, content: content))
                let unknown = try await peer.errorReply(
                    for: GetAttachmentRequest(digest: BlobDigest(of: Data("other".utf8)), docID: "blob-doc"))
                #expect(unknown?.code == 404)
            }
        }
    }

    @Test("a puller that does not announce blobs gets _attachments stand-ins; a plain body goes as stored")
    func standInsWithoutBlobs() async throws {
        let content = Data("hello, blob".utf8)
        let digest = BlobDigest(of: content)
        let plain = #"{"name":"widget", "tags":["a","b"]}"#
        try await TestGateway.run { gateway in
            let database = try await gateway.database
            _ = try database.blobs.write(content)
            let body = #"{"file":{"@type":"blob","digest":"\#(digest.description)","length":\#(content.count)}}"#
            try await database.save("blob-doc", body: Data(body.utf8), parentRevID: nil)
            try await database.save("plain-doc", body: Data(plain.utf8), parentRevID: nil)
            let recorder = PullRecorder()
            await recorder.setAnnouncesBlobs(false)
            try await ActivePeer.connect(port: gateway.port, configure: { await recorder.install(on: $0) }) { peer in
                try await peer.send(SubChangesRequest())
                try await eventually("both revs") { await recorder.revisions.count == 2 }
                let revisions = await recorder.revisions
                let blobRev = try #require(revisions.first { $0.docID == "blob-doc" })
                let standIn = try #require(
                    try blobRev.bodyObject()["_attachments"]?.objectValue?["blob_/file"]?.objectValue)
                #expect(standIn["digest"] == .string(digest.description))
                #expect(standIn["stub"] == .bool(true))
                let plainRev = try #require(revisions.first { $0.docID == "plain-doc" })
                #expect(String(decoding: plainRev.body, as: UTF8.self) == plain)
            }
        }
    }

    @Test("changes from an active pusher is answered with the known ancestors, or 'don't send'")
    func incomingChanges() async throws {
        try await TestGateway.run { gateway in
            try await ActivePeer.connect(port: gateway.port) { peer in
                try await peer.send(
                    RevRequest(docID: "doc", revision: .tree(revision(1, "a")), body: json(#"{"v":1}"#)))
                let rows = [
                    ChangeRow(sequence: 1, docID: "doc", revision: .tree(revision(1, "a"))),
                    ChangeRow(sequence: 2, docID: "doc", revision: .tree(revision(2, "b"))),
                    ChangeRow(sequence: 3, docID: "new", revision: .tree(revision(1, "c"))),
                ]
                let reply = try await peer.send(
                    ChangesRequest(rows: rows), expecting: ChangesReply.self, isUrgent: true)
                #expect(
                    reply.entries == [
                        .skip, .send(knownAncestors: [.tree(revision(1, "a"))]), .send(knownAncestors: []),
                    ])
                #expect(reply.capabilities == .liteCore(includingDeltas: true))
            }
        }
    }

    @Test("a listener bound by interface name serves on that interface's address")
    func interfaceName() async throws {
        var settings = TestGateway.settings()
        settings.interface = "lo"
        try await TestGateway.run(settings: settings) { gateway in
            try await ActivePeer.connect(port: gateway.port) { peer in
                let missing = try await peer.errorReply(for: GetCheckpointRequest(client: "cp"))
                #expect(missing?.code == 404)
            }
        }
    }
}
