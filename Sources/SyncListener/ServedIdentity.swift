import EdgeIdentity
import NIOSSL
import Synchronization

/// The TLS identity a listener presents, swapped when its certificate files change: each new handshake picks up
/// the identity current at that moment, connections already open keep theirs.
final class ServedIdentity: Sendable {
    private let state: Mutex<(identity: TLSIdentity, problem: String?)>

    init(_ identity: TLSIdentity) {
        state = Mutex((identity, nil))
    }

    var identity: TLSIdentity { state.withLock { $0.identity } }

    /// Why the files on disk are not what is served, until they load again.
    var problem: String? { state.withLock { $0.problem } }

    func replace(with identity: TLSIdentity) {
        state.withLock { $0 = (identity, nil) }
    }

    func refuse(_ problem: String) {
        state.withLock { $0.problem = problem }
    }

    /// Installs the current identity in every handshake, over the one the TLS context was built with.
    func install(in configuration: inout TLSConfiguration) {
        configuration.sslContextCallback = { [self] _, promise in
            let identity = self.identity
            var override = NIOSSLContextConfigurationOverride()
            override.certificateChain = identity.certificateChain.map { .certificate($0) }
            override.privateKey = .privateKey(identity.privateKey)
            promise.succeed(override)
        }
    }
}
