import EdgeGatewayTestSupport
import EdgeStore
import Foundation
import ReplicationProtocol
import SyncJSON
import Testing

@testable import EdgeReplication

@Suite("Active replicator filters and pending documents")
struct ActiveReplicatorFilterTests {
    @Test("a document-ID filter limits what is pushed")
    func pushedDocumentIDs() async throws {
        try await TestGateway.run { gateway in
            try await LocalDatabase.run { local in
                let saved = try await saveDocuments(5, prefix: "doc", in: local.database)
                let status = try await local.replicate(with: gateway, .push) { $0.documentIDs = ["doc-1", "doc-3"] }
                #expect(status.total == 2)
                #expect(status.lastError == nil)
                let remote = try await gateway.database
                #expect(
                    try await currentRevisions(of: saved.keys, in: remote)
                        == saved.filter { ["doc-1", "doc-3"].contains($0.key) })
            }
        }
    }

    @Test("a document-ID filter limits what is pulled")
    func pulledDocumentIDs() async throws {
        try await TestGateway.run { gateway in
            let remote = try await gateway.database
            let upstream = try await saveDocuments(5, prefix: "up", in: remote)
            try await LocalDatabase.run { local in
                let status = try await local.replicate(with: gateway, .pull) { $0.documentIDs = ["up-0", "up-4"] }
                #expect(status.lastError == nil)
                #expect(status.completed == 2)
                #expect(
                    try await currentRevisions(of: upstream.keys, in: local.database)
                        == upstream.filter { ["up-0", "up-4"].contains($0.key) })
            }
        }
    }

    @Test("filters are part of the checkpoint: widening the filter pushes what it now includes")
    func filteredCheckpoint() async throws {
        try await TestGateway.run { gateway in
            try await LocalDatabase.run { local in
                try await saveDocuments(4, prefix: "doc", in: local.database)
                try await local.replicate(with: gateway, .push) { $0.documentIDs = ["doc-0"] }
                let widened = try await local.replicate(with: gateway, .push)
                #expect(widened.total == 4, "an unfiltered replication keeps its own checkpoint")
                #expect(try await gateway.database.document("doc-3") != nil)
            }
        }
    }

    @Test("subChanges carries channels as the bychannel filter and document IDs as its body (spec §3.4)")
    func subscriptionMessage() throws {
        var configuration = ActiveReplicator.Configuration(
            remoteURL: "ws://127.0.0.1:1/db", remoteUUID: "u", direction: .pull)
        configuration.channels = ["store-42", "prices"]
        configuration.documentIDs = ["a", "b"]
        let (properties, body) = ActiveReplicatorSession.subscription(
            configuration: configuration, since: .number(JSONNumber(7)), activeOnly: false, versioning: .revisionTrees
        ).encode()
        #expect(properties["filter"] == "sync_gateway/bychannel")
        #expect(properties["channels"] == "store-42,prices")
        #expect(properties["since"] == "7")
        #expect(try JSONValue(parsing: body) == ["docIDs": ["a", "b"]])

        let unfiltered = ActiveReplicatorSession.subscription(
            configuration: .init(remoteURL: "ws://127.0.0.1:1/db", remoteUUID: "u", direction: .pull), since: nil,
            activeOnly: true, versioning: .versionVectors
        ).encode()
        #expect(unfiltered.properties["filter"] == nil)
        #expect(unfiltered.properties["channels"] == nil)
        #expect(unfiltered.body.isEmpty)
    }

    @Test("a channel filter reaches the upstream, which this project's listener refuses like LiteCore")
    func channelsRefusedByListener() async throws {
        try await TestGateway.run { gateway in
            try await LocalDatabase.run { local in
                let replicator = local.makeReplicator(with: gateway, .pull) { $0.channels = ["store-42"] }
                await #expect(
                    throws: ActiveReplicatorError.peerRefused(
                        request: "subChanges", domain: "LiteCore", code: 19, message: "Filtering not supported")
                ) { try await replicator.run() }
            }
        }
    }

    @Test("documents changed since the push checkpoint are pending until pushed")
    func pendingDocuments() async throws {
        try await TestGateway.run { gateway in
            try await LocalDatabase.run { local in
                let saved = try await saveDocuments(3, prefix: "doc", in: local.database)
                let replicator = local.makeReplicator(with: gateway, .push)
                #expect(try await replicator.pendingDocumentIDs() == Set(saved.keys))
                #expect(try await replicator.isDocumentPending("doc-0"))
                #expect(try await replicator.isDocumentPending("missing") == false)

                try await replicator.run()
                #expect(try await replicator.pendingDocumentIDs().isEmpty)
                #expect(try await replicator.isDocumentPending("doc-0") == false)

                try await local.database.save("doc-2", body: Data(#"{"n":"two"}"#.utf8), parentRevID: saved["doc-2"])
                #expect(try await replicator.pendingDocumentIDs() == ["doc-2"])
                #expect(try await replicator.isDocumentPending("doc-2"))

                let again = local.makeReplicator(with: gateway, .pushAndPull)
                #expect(
                    try await again.pendingDocumentIDs() == ["doc-2"], "a new replicator reads the saved checkpoint")
            }
        }
    }

    @Test("pending documents respect the document-ID filter; a pull-only replicator has none to report")
    func pendingDocumentsFiltered() async throws {
        try await TestGateway.run { gateway in
            try await LocalDatabase.run { local in
                try await saveDocuments(3, prefix: "doc", in: local.database)
                let filtered = local.makeReplicator(with: gateway, .push) { $0.documentIDs = ["doc-1"] }
                #expect(try await filtered.pendingDocumentIDs() == ["doc-1"])
                #expect(try await filtered.isDocumentPending("doc-0") == false)
                #expect(try await filtered.isDocumentPending("doc-1"))

                let pullOnly = local.makeReplicator(with: gateway, .pull)
                await #expect(throws: ActiveReplicatorError.notPushing(operation: "pendingDocumentIDs")) {
                    try await pullOnly.pendingDocumentIDs()
                }
            }
        }
    }
}
