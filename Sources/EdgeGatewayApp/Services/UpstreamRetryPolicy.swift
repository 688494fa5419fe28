import EdgeConfig
import EdgeGatewayPairingKit
import EdgeReplication
import UpstreamDialer

/// When and how soon to try an upstream again, as Couchbase Lite does (spec §1.4): transient failures are
/// retried with exponential back-off (1, 2, 4 … s, with jitter, capped at `max_attempt_wait`); refusals that
/// will not change by themselves (401, 403, 404, protocol errors) stop the replication.
struct UpstreamRetryPolicy {
    let maxAttempts: Int
    let maxWait: Duration

    init(settings: UpstreamSettings) {
        // 0 means the default: 10 attempts for one-shot, unlimited for continuous.
        maxAttempts = settings.maxAttempts > 0 ? settings.maxAttempts : (settings.continuous ? 0 : 10)
        maxWait = settings.maxAttemptWait
    }

    func allowsAttempt(_ attempt: Int) -> Bool {
        maxAttempts == 0 || attempt <= maxAttempts
    }

    func delay(afterAttempt attempt: Int) -> Duration {
        let exponential = Duration.seconds(1 << min(attempt - 1, 20))
        let capped = min(exponential, maxWait)
        // Up to 25 % less, so that gateways restarted together do not retry in lockstep.
        let jitter = Double.random(in: 0.75...1.0)
        return capped * jitter
    }

    func isTransient(_ error: any Error) -> Bool {
        switch error {
        case let error as UpstreamDialError:
            return error.isTransient
        case let error as PairingResolutionError:
            return error.isTransient
        case ActiveReplicatorError.invalidRemoteURL:
            return false
        case ActiveReplicatorError.peerRefused(_, let domain, let code, _):
            return domain == "HTTP" && UpstreamDialError.transientHTTPStatuses.contains(code)
        case ActiveReplicatorError.invalidReply, ActiveReplicatorError.incompatibleProtocol:
            return false
        default:
            // Connections lost mid-run (close code 1006, missed heartbeats), store hiccups.
            return true
        }
    }
}
