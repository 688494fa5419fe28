import Testing
import UpstreamDialer

/// The `UpstreamDialError` that `body` throws; an issue is recorded when it succeeds or throws anything else.
package func dialError(_ body: () async throws -> Void) async -> UpstreamDialError? {
    do {
        try await body()
        Issue.record("expected the call to fail")
        return nil
    } catch let error as UpstreamDialError {
        return error
    } catch {
        Issue.record("expected an UpstreamDialError, got \(error)")
        return nil
    }
}
