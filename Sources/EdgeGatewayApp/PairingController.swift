import EdgePairing
import Hummingbird

/// `/pairing` on the ops endpoint: the payloads as JSON, and one of them as a QR image for an admin screen
/// (`/pairing.png` or `/pairing.svg`, choosing with `?listener=…&database=…`, default the first).
struct PairingController: Sendable {
    /// Nil while the store is down: there are no listeners, and perhaps no node ID, to pair with.
    let pairing: PairingService?

    func addRoutes(to router: Router<some RequestContext>) {
        router.get("/pairing") { _, _ in
            try HealthController.json(await pairing?.entries() ?? [], status: .ok)
        }
        router.get("/pairing.png") { request, _ in
            let code = try await qrCode(for: request)
            let png = try code.pngRendering()
            return Response(
                status: .ok,
                headers: [.contentType: "image/png", .cacheControl: "no-store"],
                body: .init(byteBuffer: ByteBuffer(bytes: png))
            )
        }
        router.get("/pairing.svg") { request, _ in
            let code = try await qrCode(for: request)
            return Response(
                status: .ok,
                headers: [.contentType: "image/svg+xml", .cacheControl: "no-store"],
                body: .init(byteBuffer: ByteBuffer(string: code.svgRendering()))
            )
        }
    }

    private func qrCode(for request: Request) async throws -> QRCode {
        let listener = request.uri.queryParameters.get("listener")
        let database = request.uri.queryParameters.get("database")
        let entries = await pairing?.entries() ?? []
        guard
            let entry = entries.first(where: {
                (listener == nil || $0.listener == listener) && (database == nil || $0.database == database)
            })
        else {
            throw HTTPError(.notFound, message: "no TLS listener serves that database; see /pairing")
        }
        return try QRCode(encoding: entry.payload)
    }
}
