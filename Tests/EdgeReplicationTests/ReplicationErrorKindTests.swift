import BLIPCodec
import BLIPConnection
import EdgeStore
import ReplicationProtocol
import Testing
import UpstreamDialer

@testable import EdgeReplication

@Suite("Replication errors by kind")
struct ReplicationErrorKindTests {
    @Test("each failure maps to the kind the metrics document")
    func classification() {
        func refused(_ status: Int) -> UpstreamDialError {
            .upgradeRefused(target: "t", status: status, reason: "", wwwAuthenticate: nil, body: "")
        }
        let cases: [(any Error, ReplicationErrorKind)] = [
            (StoreError.diskFull(path: "/data"), .diskFull),
            (StoreError.io(path: "/data", reason: "EIO"), .storage),
            (StoreError.conflict(docID: "a", currentRevID: "1-aa"), .conflict),
            (StoreError.invalidJSON(reason: "x"), .rejectedRevision),
            (refused(401), .auth),
            (refused(403), .auth),
            (refused(503), .network),
            (UpstreamDialError.unreachable(target: "t", reason: "refused"), .network),
            (UpstreamDialError.tlsHandshakeFailed(target: "t", reason: "bad certificate"), .auth),
            (UpstreamDialError.subprotocolRejected(offered: ["BLIP_3+CBMobile_3"], chosen: nil), .protocol),
            (ActiveReplicatorError.connectionLost(reason: "reset"), .network),
            (ActiveReplicatorError.invalidReply(request: "rev", reason: "no body"), .protocol),
            (ActiveReplicatorError.peerRefused(request: "rev", domain: "HTTP", code: 403, message: ""), .auth),
            (ActiveReplicatorError.peerRefused(request: "rev", domain: "HTTP", code: 500, message: ""), .peerRefused),
            (ActiveReplicatorError.storeFailed(docID: "a", reason: "EIO"), .storage),
            (BLIPConnectionError.textMessageReceived, .protocol),
            (BLIPConnectionError.unexpectedWebSocketFrame(.continuationWithoutFirstFragment), .protocol),
            (BLIPConnectionError.writeFailed("reset"), .network),
            (BLIPErrorReply(domain: "HTTP", code: 404), .peerRefused),
            (CancellationError(), .other),
        ]
        for (error, kind) in cases {
            #expect(ReplicationErrorKind(classifying: error) == kind, "\(error)")
        }
    }

    @Test("conflicts, missing and rejected revisions count once under their own counters and their kind")
    func derivedKinds() {
        let total = ReplicationCounters()
        let connection = ReplicationCounters(aggregatingInto: total)
        connection.countConflict()
        connection.countRejectedPush()
        connection.countRejectedPull()
        connection.countMissingRevision()
        connection.countError(.diskFull)
        for counters in [connection, total] {
            #expect(counters.errors(of: .conflict) == 1)
            #expect(counters.errors(of: .rejectedRevision) == 2)
            #expect(counters.errors(of: .missingRevision) == 1)
            #expect(counters.errors(of: .diskFull) == 1)
            #expect(counters.errors(of: .storage) == 0)
        }
    }
}
