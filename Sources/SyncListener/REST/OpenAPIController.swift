import Foundation
import Hummingbird
import NIOCore

/// `GET /_openapi.json`: the REST API's OpenAPI 3.1 description, kept in the repository as
/// `Sources/SyncListener/Resources/openapi.json` and served as it is.
struct OpenAPIController: Sendable {
    let listener: SyncListener

    static let document: Data? = Bundle.module.url(forResource: "openapi", withExtension: "json")
        .flatMap { try? Data(contentsOf: $0) }

    func addRoutes(to router: Router<BasicRequestContext>) {
        router.get("/_openapi.json") { request, _ in
            do throws(SyncListener.Refusal) {
                try await listener.authenticate(request.headers)
            } catch {
                return RESTError(authenticationRefusal: error).response
            }
            guard let document = Self.document else {
                return RESTError(
                    status: .internalServerError, error: "Internal Server Error",
                    reason: "the OpenAPI document is missing from this build"
                ).response
            }
            return Response(
                status: .ok, headers: [.contentType: "application/json"],
                body: .init(byteBuffer: ByteBuffer(bytes: document)))
        }
    }
}
