// docs/pairing.md: begin
import EdgeGatewayPairingKit
import Foundation

/// What the app keeps after a successful scan: enough to start syncing without scanning again.
struct StoredPairing: Codable {
    /// The scanned text: found again with it when the gateway's address changes.
    var payload: String
    /// `wss://address:port/db`, the address that answered.
    var endpoint: URL
    /// The gateway's certificate, checked against the payload's digests: what the replicator pins.
    var certificateDER: Data
}

func pair(scanned: String) async throws -> StoredPairing {
    let gateway = try await PairedGateway.resolve(scannedPayload: scanned)
    return StoredPairing(payload: scanned, endpoint: gateway.endpoint, certificateDER: Data(gateway.certificateDER))
}
// docs/pairing.md: end
