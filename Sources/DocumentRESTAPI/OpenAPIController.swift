import Foundation
import Hummingbird
import NIOCore

/// `GET /_openapi.json`: the REST API's OpenAPI 3.1 description, kept in the repository as
/// `Sources/DocumentRESTAPI/Resources/openapi.json` and served as it is.
struct OpenAPIController: Sendable {
    let api: DocumentRESTAPI

    static let document: Data? = Bundle.module.url(forResource: "openapi", withExtension: "json")
        .flatMap { try? Data(contentsOf: $0) }

    func addRoutes(to router: Router<BasicRequestContext>) {
        router.get("/_openapi.json") { request, _ in
            do throws(RESTError) {
                try await api.host.authenticateREST(request.headers)
            } catch {
                return error.response
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
