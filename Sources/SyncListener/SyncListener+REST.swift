import DocumentRESTAPI
import EdgeStore
import HTTPTypes
import Hummingbird

extension SyncListener: RESTHost {
    /// Mounts the document REST API on this listener's router; nothing when `rest_api = false`.
    func addRESTRoutes(to router: Router<BasicRequestContext>) {
        guard let restAPI = configuration.restAPI else { return }
        DocumentRESTAPI(host: self, configuration: restAPI, logger: logger).addRoutes(to: router)
    }

    package func authenticateREST(_ headers: HTTPFields) async throws(RESTError) {
        do throws(Refusal) {
            try await authenticate(headers)
        } catch {
            throw RESTError(authenticationRefusal: error)
        }
    }

    package func openServedDatabase(_ name: String) async throws(RESTError) -> DocumentDatabase {
        do throws(Refusal) {
            return try await servedDatabase(name)
        } catch {
            throw RESTError(status: error.status, error: "Internal Server Error", reason: error.message)
        }
    }
}

extension RESTError {
    /// A refused login in Sync Gateway's error shape: 401 for missing or wrong credentials, the listener's own
    /// status (503 with `Retry-After` when too many password checks are under way) otherwise.
    init(authenticationRefusal refusal: SyncListener.Refusal) {
        if refusal.status == .unauthorized {
            self = .loginRequired
        } else {
            self = RESTError(
                status: refusal.status, error: refusal.status.reasonPhrase, reason: refusal.message,
                headers: refusal.headers)
        }
    }
}
