import BLIPCodec
import EdgeGatewayTestSupport
import EdgeStore
import Foundation
import ReplicationProtocol
import SyncIdentifiers
import Testing

@Suite("Pushing to the passive peer")
struct PushTests {
    @Test("one-shot push of 3 documents: getCheckpoint 404, proposeChanges, rev ×3, setCheckpoint")
    func oneShotPush() async throws {
        try await TestGateway.run { gateway in
            try await ActivePeer.connect(port: gateway.port) { peer in
                let missing = try await peer.errorReply(for: GetCheckpointRequest(client: "cp-push"))
                #expect(missing == BLIPErrorReply(domain: "HTTP", code: 404))

                let rows = (0..<3).map {
                    ReplicationProtocol.ProposedChange(
                        docID: "doc-\($0)", revision: .tree(revision(1, "a")), bodySize: 10)
                }
                let reply = try await peer.send(
                    ProposeChangesRequest(rows: rows), expecting: ProposeChangesReply.self, isUrgent: true)
                #expect(reply.statuses.isEmpty)
                #expect(reply.capabilities == ReceiverCapabilities(maxHistory: 50, blobs: true, deltas: true))

                for index in 0..<3 {
                    try await peer.send(
                        RevRequest(
                            docID: "doc-\(index)", revision: .tree(revision(1, "a")), sequence: .integer(index + 1),
                            noConflicts: true, body: json(#"{"n":\#(index)}"#)))
                }
                let checkpoint = json(#"{"time":1795314763,"local":3}"#)
                let saved = try await peer.send(
                    SetCheckpointRequest(client: "cp-push", revision: nil, body: checkpoint),
                    expecting: SetCheckpointReply.self)
                #expect(saved.revision == "1-cc")
                let stored = try await peer.send(
                    GetCheckpointRequest(client: "cp-push"), expecting: GetCheckpointReply.self)
                #expect(stored == GetCheckpointReply(revision: "1-cc", body: checkpoint))

                let stale = try await peer.errorReply(
                    for: SetCheckpointRequest(client: "cp-push", revision: nil, body: checkpoint))
                #expect(stale?.code == 409)

                let second = try await peer.send(
                    ProposeChangesRequest(rows: [rows[0]]), expecting: ProposeChangesReply.self)
                #expect(second.capabilities.deltas == false, "deltas is announced only in the first reply")
                #expect(second.statuses == [.alreadyKnown])
            }
            let database = try await gateway.database
            for index in 0..<3 {
                let document = try #require(try await database.document("doc-\(index)"))
                #expect(document.revID.description == revision(1, "a").description)
                #expect(try object(document.body) == ["n": .integer(index)])
            }
        }
    }

    @Test("a revision is stored whatever digest length LiteCore allows beside its generation")
    func longestDigest() async throws {
        // 41 bytes at generation 1: the store's former flat limit of 37 refused it with a 400.
        let longest = try RevisionID(generation: 1, digest: String(repeating: "ab", count: 41))
        try await TestGateway.run { gateway in
            try await ActivePeer.connect(port: gateway.port) { peer in
                let proposal = try await peer.send(
                    ProposeChangesRequest(rows: [
                        ReplicationProtocol.ProposedChange(docID: "long", revision: .tree(longest))
                    ]
                    ),
                    expecting: ProposeChangesReply.self)
                #expect(proposal.statuses.isEmpty)
                try await peer.send(
                    RevRequest(docID: "long", revision: .tree(longest), noConflicts: true, body: json(#"{"v":1}"#)))
            }
            #expect(try await gateway.database.document("long")?.revID == longest)
        }
    }

    @Test("an update and a deletion are stored with their history")
    func updateAndDelete() async throws {
        try await TestGateway.run { gateway in
            try await ActivePeer.connect(port: gateway.port) { peer in
                try await peer.send(
                    RevRequest(
                        docID: "doc", revision: .tree(revision(1, "a")), noConflicts: true, body: json(#"{"v":1}"#)))
                let proposal = try await peer.send(
                    ProposeChangesRequest(rows: [
                        ReplicationProtocol.ProposedChange(
                            docID: "doc", revision: .tree(revision(2, "b")), remoteRevision: .tree(revision(1, "a")))
                    ]),
                    expecting: ProposeChangesReply.self)
                #expect(proposal.status(at: 0) == .accepted)
                try await peer.send(
                    RevRequest(
                        docID: "doc", revision: .tree(revision(2, "b")), history: RevisionHistory([revision(1, "a")]),
                        noConflicts: true, body: json(#"{"v":2}"#)))
                try await peer.send(
                    RevRequest(
                        docID: "doc", revision: .tree(revision(3, "c")),
                        history: RevisionHistory([revision(2, "b"), revision(1, "a")]),
                        deleted: true, noConflicts: true, body: json("{}")))
            }
            let database = try await gateway.database
            let document = try #require(try await database.document("doc"))
            #expect(document.deleted)
            #expect(document.revID.description == revision(3, "c").description)
            let history = try await database.revisionHistory("doc", revID: document.revID)
            #expect(history.map(\.description) == [revision(2, "b").description, revision(1, "a").description])
        }
    }

    @Test("a conflicting proposal is answered {status: 409, rev: current}, and a branching rev with 409")
    func conflict() async throws {
        try await TestGateway.run { gateway in
            let database = try await gateway.database
            try await ActivePeer.connect(port: gateway.port) { peer in
                try await peer.send(
                    RevRequest(docID: "doc", revision: .tree(revision(1, "a")), body: json(#"{"v":1}"#)))
            }
            let serverRevision = try await database.save(
                "doc", body: Data(#"{"v":"server"}"#.utf8), parentRevID: revision(1, "a"))
            try await ActivePeer.connect(port: gateway.port) { peer in
                let reply = try await peer.send(
                    ProposeChangesRequest(rows: [
                        ReplicationProtocol.ProposedChange(
                            docID: "doc", revision: .tree(revision(2, "b")), remoteRevision: .tree(revision(1, "a")))
                    ]),
                    expecting: ProposeChangesReply.self)
                #expect(reply.statuses == [.conflict(currentRevision: .tree(serverRevision.revID))])
                let refused = try await peer.errorReply(
                    for: RevRequest(
                        docID: "doc", revision: .tree(revision(2, "b")), history: RevisionHistory([revision(1, "a")]),
                        noConflicts: true, body: json(#"{"v":"client"}"#)))
                #expect(refused?.domain == "HTTP")
                #expect(refused?.code == 409)
            }
            #expect(try await database.document("doc")?.revID == serverRevision.revID)
        }
    }

    @Test("a delta rev is applied to its stored base; an unknown base is 422")
    func deltaPush() async throws {
        try await TestGateway.run { gateway in
            try await ActivePeer.connect(port: gateway.port) { peer in
                try await peer.send(
                    RevRequest(
                        docID: "doc", revision: .tree(revision(1, "a")), body: json(#"{"name":"big","keep":[1,2,3]}"#)))
                try await peer.send(
                    RevRequest(
                        docID: "doc", revision: .tree(revision(2, "b")), history: RevisionHistory([revision(1, "a")]),
                        noConflicts: true, deltaSource: .tree(revision(1, "a")),
                        body: json(#"{"update_count":1,"name":[]}"#)))
                let unknownBase = try await peer.errorReply(
                    for: RevRequest(
                        docID: "other", revision: .tree(revision(2, "b")), history: RevisionHistory([revision(1, "a")]),
                        deltaSource: .tree(revision(1, "a")), body: json(#"{"x":1}"#)))
                #expect(unknownBase == BLIPErrorReply(domain: "HTTP", code: 422, message: unknownBase?.message ?? ""))
            }
            let document = try #require(try await gateway.database.document("doc"))
            #expect(try object(document.body) == ["keep": [1, 2, 3], "update_count": 1])
        }
    }

    @Test("a pushed blob is fetched with getAttachment before the rev is answered")
    func blobPush() async throws {
        let content = Data((0..<50_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        let digest = BlobDigest(of: content)
        let requests = Requests()
        try await TestGateway.run { gateway in
            try await ActivePeer.connect(
                port: gateway.port,
                configure: { connection in
                    await connection.setHandler(for: "getAttachment") { request in
                        await requests.append(request.properties)
                        return request.reply(
                            body: Array(content), isCompressed: request.properties["compress"] == "true")
                    }
                }
            ) { peer in
                let body =
                    #"{"attachment":{"content_type":"application/octet-stream","digest":"\#(digest.description)","length":\#(content.count),"@type":"blob"}}"#
                try await peer.send(
                    RevRequest(docID: "blob-doc-0", revision: .tree(revision(1, "a")), body: json(body)))
            }
            let recorded = await requests.all
            #expect(recorded.count == 1)
            #expect(recorded.first?["digest"] == digest.description)
            #expect(recorded.first?["docID"] == "blob-doc-0")
            #expect(recorded.first?["compress"] == "true")
            let stored = try await gateway.database.blobs.read(digest)
            #expect(stored == content)
        }
    }

    @Test("revisions are stored in the order they arrived, though the first waits for its blob")
    func arrivalOrder() async throws {
        let content = Data(repeating: 7, count: 2_000)
        let digest = BlobDigest(of: content)
        let (fetches, fetched) = AsyncStream.makeStream(of: Void.self)
        let (releases, release) = AsyncStream.makeStream(of: Void.self)
        try await TestGateway.run { gateway in
            try await ActivePeer.connect(
                port: gateway.port,
                configure: { connection in
                    await connection.setHandler(for: "getAttachment") { request in
                        fetched.yield()
                        for await _ in releases { break }
                        return request.reply(body: Array(content))
                    }
                }
            ) { peer in
                let body =
                    #"{"attachment":{"content_type":"application/octet-stream","digest":"\#(digest.description)","length":\#(content.count),"@type":"blob"}}"#
                async let first: Void = peer.send(
                    RevRequest(docID: "first", revision: .tree(revision(1, "a")), body: json(body)))
                for await _ in fetches { break }
                async let second: Void = peer.send(
                    RevRequest(docID: "second", revision: .tree(revision(1, "a")), body: json(#"{"n":2}"#)))
                // Time for the second `rev` to get as far as it can; without the arrival order it is stored
                // now, ahead of the first.
                try await Task.sleep(for: .milliseconds(200))
                release.yield()
                _ = try await (first, second)
            }
            let database = try await gateway.database
            let first = try #require(try await database.document("first"))
            let second = try #require(try await database.document("second"))
            #expect(first.sequence < second.sequence)
        }
    }
}

actor Requests {
    private(set) var all: [BLIPProperties] = []
    func append(_ properties: BLIPProperties) { all.append(properties) }
}
