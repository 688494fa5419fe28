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

// The code between the two markers is shown verbatim in docs/pairing.md ("In your app"); a test checks that it is,
// and the end-to-end test pairs through it, so the documented Swift is compiled and run.

enum DocumentedPairing {
    static let beginMarker = "// docs/pairing.md: begin\n"
    static let endMarker = "// docs/pairing.md: end"

    /// The lines between the markers in this file.
    static func snippet() throws -> String {
        let source = try String(contentsOfFile: #filePath, encoding: .utf8)
        guard let begin = source.range(of: beginMarker), let end = source.range(of: endMarker) else {
            throw TimedOut(description: "the snippet markers are missing from \(#filePath)")
        }
        return String(source[begin.upperBound..<end.lowerBound])
    }

    static var documentation: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("docs/pairing.md")
    }
}
