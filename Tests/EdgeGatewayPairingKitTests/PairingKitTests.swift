import EdgeGatewayPairingKit
import EdgeGatewayTestSupport
import EdgeIdentity
import EdgePairing
import EdgeReplication
import Foundation
import Testing
import UpstreamDialer

/// The device's side of pairing, over real loopback sockets against the gateway run in-process: from the scanned
/// code to a pinned replicator that syncs, and every way a payload can fail to lead there.
@Suite("EdgeGatewayPairingKit: from a scanned payload to a pinned replicator")
struct PairingKitTests {
    @Test(
        "the terminal code, read by zxing, resolves to the listener; a replicator pinned to the DER syncs both ways",
        .enabled(if: ZXingReader.isAvailable, Comment(rawValue: ZXingReader.unavailableReason))
    )
    func scannedCodeSyncsBothWays() async throws {
        let gateway = try PairingGateway()
        defer { gateway.remove() }
        try await gateway.run { published in
            let scanned = try await Camera.scanTerminalCode(encoding: published)
            #expect(scanned == published)
            // The documented app code: what the device stores after the scan.
            let stored = try await pair(scanned: scanned)
            #expect(stored.endpoint.absoluteString == "wss://127.0.0.1:\(gateway.listenerPort)/inventory")
            let identity = try gateway.currentIdentity()
            #expect(Array(stored.certificateDER) == identity.derBytes)
            let paired = try await PairedGateway.resolve(scannedPayload: scanned)
            #expect(paired.address == "127.0.0.1")
            #expect(paired.certificatePEM == identity.pemString)

            try await Device.run { phone in
                try await Device.run { tablet in
                    try await phone.save("from-phone")
                    try await tablet.save("from-tablet")
                    // The phone syncs continuously from what it stored, as the documented app does; the tablet
                    // in one-shot runs.
                    let continuous = try phone.replicator(
                        endpoint: stored.endpoint, pinnedCertificateDER: Array(stored.certificateDER),
                        continuous: true)
                    let phoneSync = Task { try await continuous.run() }
                    defer { phoneSync.cancel() }
                    try await eventually("the tablet to pull the phone's document") {
                        try await tablet.replicator(for: paired).run()
                        return try await tablet.has("from-phone")
                    }
                    try await eventually("the phone to pull the tablet's document") {
                        try await phone.has("from-tablet")
                    }
                    phoneSync.cancel()
                    try await phoneSync.value
                }
            }
        }
    }

    @Test("a certificate whose SHA-256 or SHA-1 is not the payload's is refused, naming expected and presented")
    func digestMismatch() async throws {
        let gateway = try PairingGateway()
        defer { gateway.remove() }
        try await gateway.run { published in
            let payload = try PairingPayload(decoding: published)
            let identity = try gateway.currentIdentity()
            let wrongSHA256 = [UInt8](repeating: 0xAB, count: 32)
            let wrongSHA1 = [UInt8](repeating: 0xCD, count: 20)
            for (sha256, sha1) in [(wrongSHA256, payload.certificateSHA1), (payload.certificateSHA256, wrongSHA1)] {
                let forged = try PairingPayload(
                    addresses: payload.addresses, port: payload.port, database: payload.database,
                    certificateSHA256: sha256, certificateSHA1: sha1, nodeName: payload.nodeName,
                    nodeID: payload.nodeID)
                let error = await Self.resolutionError(forged.uriString)
                let expected = [
                    try CertificateFingerprint(digestBytes: sha256, algorithm: .sha256),
                    try CertificateFingerprint(digestBytes: try #require(sha1), algorithm: .sha1),
                ]
                let presented = [identity.sha256Fingerprint, identity.sha1Fingerprint]
                #expect(
                    error
                        == .digestMismatch(
                            endpoint: "127.0.0.1:\(gateway.listenerPort)", expected: expected, presented: presented))
                #expect(error?.isTransient == false)
                let message = "\(String(describing: error))"
                #expect(message.contains(expected[0].colonHex) && message.contains(presented[0].colonHex))
                #expect(message.contains("possible interception or a rotated certificate: pair again"))
            }
        }
    }

    @Test("an unreachable first address falls through to the next; only when all fail is each one reported")
    func addressesInOrder() async throws {
        let gateway = try PairingGateway()
        defer { gateway.remove() }
        try await gateway.run { published in
            let payload = try PairingPayload(decoding: published)
            // The listener is bound to 127.0.0.1 only: the rest of 127/8 refuses its port.
            let fallingThrough = try Self.payload(payload, addresses: ["127.0.0.2", "127.0.0.1"])
            let paired = try await PairedGateway.resolve(scannedPayload: fallingThrough.uriString)
            #expect(paired.addressIndex == 1)
            #expect(paired.endpoint.absoluteString == "wss://127.0.0.1:\(gateway.listenerPort)/inventory")

            let nowhere = try Self.payload(payload, addresses: ["127.0.0.2", "127.0.0.3"])
            let error = await Self.resolutionError(nowhere.uriString)
            guard case .unreachable(let failures) = error else {
                Issue.record("expected unreachable, got \(String(describing: error))")
                return
            }
            #expect(failures.map(\.address) == ["127.0.0.2", "127.0.0.3"])
            #expect(failures.allSatisfy { $0.error.reason.lowercased().contains("refused") }, "\(failures)")
            #expect(error?.isTransient == true)
            let message = "\(String(describing: error))"
            #expect(
                message.contains("127.0.0.2:\(gateway.listenerPort)")
                    && message.contains("127.0.0.3:\(gateway.listenerPort)"))
        }
    }

    @Test("after the certificate is rotated, the old payload and the device's pinned replicator are both refused")
    func rotatedCertificate() async throws {
        let gateway = try PairingGateway()
        defer { gateway.remove() }
        let before = try await gateway.run { published in
            try await PairedGateway.resolve(scannedPayload: published)
        }
        let rotated = try gateway.rotateCertificate()
        #expect(rotated.derBytes != before.certificateDER)

        try await gateway.run { republished in
            let error = await Self.resolutionError(before.payload.uriString)
            guard case .digestMismatch(_, let expected, let presented) = error else {
                Issue.record("expected a digest mismatch, got \(String(describing: error))")
                return
            }
            #expect(expected.first?.bytes == before.payload.certificateSHA256)
            #expect(presented.first == rotated.sha256Fingerprint)

            try await Device.run { device in
                try await device.save("after-rotation")
                let refused = await #expect(throws: UpstreamDialError.self) {
                    try await device.replicator(for: before).run()
                }
                guard case .serverCertificateRejected(.pinMismatch) = refused else {
                    Issue.record("expected a pin mismatch, got \(String(describing: refused))")
                    return
                }
                // Pairing again with the gateway's current code is the remedy.
                let again = try await PairedGateway.resolve(scannedPayload: republished)
                #expect(again.certificateDER == rotated.derBytes)
                try await device.replicator(for: again).run()
            }
        }
    }

    @Test("a payload with a key this version does not define is refused before any connection")
    func unknownKeys() async throws {
        try await withClosedLoopbackPort { closedPort in
            let sample = try PairingPayload(
                addresses: ["127.0.0.1"], port: closedPort, database: "inventory",
                certificateSHA256: [UInt8](repeating: 1, count: 32), certificateSHA1: nil, nodeName: "n",
                nodeID: UUID())
            // Resolved, this payload would be unreachable: a malformed-payload error shows nothing was dialled.
            #expect(await Self.resolutionError(sample.uriString)?.isTransient == true)
            let error = await Self.resolutionError(sample.uriString + "&tls=off")
            #expect(error == .malformedPayload(.unknownParameter("tls")))
            #expect("\(String(describing: error))".contains("unknown parameter 'tls'"))
            #expect(error?.isTransient == false)
            #expect(
                await Self.resolutionError("https://example.com/?v=1")
                    == .malformedPayload(.notAPairingPayload("https://example.com/?v=1")))
        }
    }

    @Test(
        "a gateway's own pairing upstream goes through the kit: past an unreachable address; a forged digest stops it")
    func gatewayUpstream() async throws {
        let gateway = try PairingGateway()
        defer { gateway.remove() }
        try await gateway.run { published in
            let payload = try PairingPayload(decoding: published)
            let secondAddress = try Self.payload(payload, addresses: ["127.0.0.2", "127.0.0.1"]).uriString
            let upstream = try PairedUpstreamGateway()
            defer { upstream.remove() }
            try await upstream.seed("from-upstream", pairing: secondAddress)
            try await upstream.run(pairing: secondAddress) { _ in
                try await Device.run { tablet in
                    let paired = try await PairedGateway.resolve(payload)
                    try await eventually("the upstream's document to reach the paired gateway") {
                        try await tablet.replicator(for: paired).run()
                        return try await tablet.has("from-upstream")
                    }
                }
            }

            let forged = try PairingPayload(
                addresses: payload.addresses, port: payload.port, database: payload.database,
                certificateSHA256: [UInt8](repeating: 0xAB, count: 32), certificateSHA1: payload.certificateSHA1,
                nodeName: payload.nodeName, nodeID: payload.nodeID
            ).uriString
            let refusing = try PairedUpstreamGateway()
            defer { refusing.remove() }
            let presented = try gateway.currentIdentity().sha256Fingerprint.colonHex
            try await refusing.run(pairing: forged) { client in
                try await eventually("the upstream to stop, naming both fingerprints") {
                    let health = try await PairedUpstreamGateway.health(client)
                    return health.contains(#""status":"down""#) && health.contains(presented)
                        && health.contains(Array(repeating: "AB", count: 32).joined(separator: ":"))
                        && health.contains("pair again")
                }
            }
        }
    }

    @Test("docs/pairing.md shows the Swift the end-to-end test runs, verbatim")
    func documentedSnippet() throws {
        let documentation = try String(contentsOf: DocumentedPairing.documentation, encoding: .utf8)
        #expect(documentation.contains("```swift\n" + (try DocumentedPairing.snippet()) + "```\n"))
    }

    static func payload(_ payload: PairingPayload, addresses: [String]) throws -> PairingPayload {
        try PairingPayload(
            addresses: addresses, port: payload.port, database: payload.database,
            certificateSHA256: payload.certificateSHA256, certificateSHA1: payload.certificateSHA1,
            nodeName: payload.nodeName, nodeID: payload.nodeID)
    }

    static func resolutionError(_ scanned: String) async -> PairingResolutionError? {
        do {
            // Generous: the failures expected here come from refused connections and completed handshakes, and a
            // CI machine running the whole suite at once has taken more than 5 s to finish a TLS handshake.
            let gateway = try await PairedGateway.resolve(scannedPayload: scanned, timeout: .seconds(30))
            Issue.record("expected an error, resolved \(gateway.endpoint)")
            return nil
        } catch {
            return error
        }
    }
}
