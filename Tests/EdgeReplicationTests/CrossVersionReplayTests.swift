import BLIPCodec
import EdgeGatewayTestSupport
import EdgeStore
import Foundation
import SyncIdentifiers
import Testing

/// The three cross-version transcripts of `cbl-4.0.3`, replayed to the listener: Couchbase Lite 3.2.4 clients
/// recorded against LiteCore 4.0.3's version-vector passive, and 4.0.3 clients against LiteCore 3.2.4's rev-tree
/// passive. Each recorded passive turned its client away: LiteCore 4.0 has no legacy (default-collection) mode and
/// refuses `versioning: rev-trees`; LiteCore 3.2.4 speaks no CBMobile_4 and refuses `collection` in legacy mode.
/// This listener serves both generations on one database, as Sync Gateway 4 does, so where the recording shows a
/// 400, 501 or 403, the same client frames must here be served: every reply a success (a missing checkpoint
/// excepted, which is the 404 both generations expect), and what was pushed stored as it was named.
@Suite("Cross-version transcripts: the clients LiteCore turned away are served")
struct CrossVersionReplayTests {
    static let fixtures = VersionVectorSessionTests.fourthGeneration

    /// The recorded connections, with the recorded passive's refusals checked and then forgotten, so that the
    /// replay requires a success where LiteCore answered `refusal`.
    static func connections(
        _ fileName: String, refusedWith refusal: Int
    ) throws -> [RecordedClientConnection] {
        var connections = try RecordedClientConnection.load(fileName, from: fixtures)
        for index in connections.indices {
            #expect(Set(connections[index].recordedErrorCodes.values) == [refusal], "\(fileName)")
            connections[index].recordedErrorCodes = [:]
        }
        return connections
    }

    @Test("3.2.4 clients in legacy mode, refused by LiteCore 4.0 with 400 on every request, are served on CBMobile_3")
    func legacyClients() async throws {
        let connections = try Self.connections("v3-client-to-v4-server.jsonl", refusedWith: 400)
        #expect(connections.count == 3)
        try await TestGateway.run { gateway in
            let (_, exchanges) = try await RecordedClientReplayTests.replayExchanges(
                connections, to: gateway, unchecked: ["getCheckpoint"])
            #expect(exchanges.allSatisfy { $0.subprotocol == "BLIP_3+CBMobile_3" })
            #expect(Set(exchanges.map(\.profile)) == ["getCheckpoint", "proposeChanges", "subChanges"])
            for exchange in exchanges {
                // Legacy mode: no `collection` on the request, and none wanted.
                #expect(exchange.request.properties["collection"] == nil)
                if exchange.profile == "getCheckpoint" {
                    // The client has saved none with us yet.
                    #expect(exchange.reply.errorReply?.code == 404, "\(exchange.reply)")
                }
            }
            // The proposals (conn 0 push-and-pull, conn 2 push) name documents this empty database lacks: all wanted.
            for proposal in exchanges where proposal.profile == "proposeChanges" {
                #expect(String(decoding: proposal.reply.body, as: UTF8.self) == "[]")
            }
        }
    }

    @Test("a 3.2.4 client on a named collection, refused by LiteCore 4.0 with 501 for rev-trees, pulls and pushes")
    func namedCollectionClient() async throws {
        let connections = try Self.connections("v3-client-named-collection-to-v4-server.jsonl", refusedWith: 501)
        let collection = try CollectionName(parsing: "store.a")
        try await TestGateway.run(collections: [collection]) { gateway in
            let (pushed, exchanges) = try await RecordedClientReplayTests.replayExchanges(connections, to: gateway)
            #expect(exchanges.allSatisfy { $0.subprotocol == "BLIP_3+CBMobile_3" })
            let subscription = try #require(exchanges.first { $0.profile == "subChanges" })
            #expect(subscription.request.properties["versioning"] == "rev-trees")
            #expect(pushed.count == 2)
            let database = try await gateway.database
            for revision in pushed {
                let stored = try #require(try await database.document(revision.docID, in: collection))
                #expect(stored.revID.description == revision.revID, "\(revision.docID)")
            }
        }
    }

    @Test("4.0.3 clients, refused by LiteCore 3.2.4 (400 to a pull, 403 to a push-and-pull), get CBMobile_4")
    func fourthGenerationClients() async throws {
        let connections = try Self.connections("v4-client-to-v3-server.jsonl", refusedWith: 400)
        // Connection 1 never upgraded (403 No supported subprotocol), so it has no frames to replay: its offer is
        // dialed as it was made.
        let offers = try RecordedClientConnection.offers(in: "v4-client-to-v3-server.jsonl", from: Self.fixtures)
        #expect(connections.map(\.conn) == [0])
        #expect(offers[0] == ["BLIP_3+CBMobile_4", "BLIP_3+CBMobile_3"])
        #expect(offers[1] == ["BLIP_3+CBMobile_4"])
        try await TestGateway.run { gateway in
            let (_, exchanges) = try await RecordedClientReplayTests.replayExchanges(connections, to: gateway)
            #expect(exchanges.allSatisfy { $0.subprotocol == "BLIP_3+CBMobile_4" })
            let subscription = try #require(exchanges.first { $0.profile == "subChanges" })
            #expect(subscription.request.properties["versioning"] == "version-vectors")
            let chosen = ChosenSubprotocol()
            try await TestGateway.dialer(port: gateway.port, subprotocols: try #require(offers[1])).run { session in
                await chosen.set(session.subprotocol)
            }
            #expect(await chosen.value == "BLIP_3+CBMobile_4")
        }
    }
}

private actor ChosenSubprotocol {
    private(set) var value: String?

    func set(_ subprotocol: String) {
        value = subprotocol
    }
}
