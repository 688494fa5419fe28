import EdgeGatewayTestSupport
import ReplicationProtocol
import SyncIdentifiers
import Testing

@testable import SyncListener

/// The listener's sweep of quiet connections, over a real replication connection.
@Suite("Deflate streams of quiet connections")
struct QuietConnectionSweepTests {
    static func proposal(_ docID: String) throws -> ProposeChangesRequest {
        ProposeChangesRequest(rows: [
            ProposedChange(docID: docID, revision: .tree(try RevisionID("1-abcd")), bodySize: 10)
        ])
    }

    @Test("a connection quiet since the last sweep gives its stream back, and its next compressed reply still reads")
    func quietConnectionsAreSwept() async throws {
        try await TestGateway.run { gateway in
            try await ActivePeer.connect(port: gateway.port) { peer in
                let sweep = gateway.listener.quietConnections
                #expect(await sweep.sweep() == 0, "nothing compressed yet, so no stream to free")
                for round in 0..<3 {
                    // LiteCore compresses a reply to proposeChanges, so the listener sets up its deflate stream.
                    let reply = try await peer.send(
                        try Self.proposal("doc-\(round)"), expecting: ProposeChangesReply.self)
                    #expect(reply.statuses.isEmpty, "the reply inflated on the client's one stream")
                    #expect(await sweep.sweep() == 0, "frames went out since the last sweep")
                    #expect(await sweep.sweep() == 1, "quiet for a whole interval")
                    #expect(await sweep.sweep() == 0, "already freed")
                }
            }
            #expect(await gateway.listener.quietConnections.sweep() == 0, "a closed connection is no longer swept")
        }
    }
}
