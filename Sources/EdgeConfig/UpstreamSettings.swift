import PairingURI
import SyncIdentifiers

import struct Foundation.URL

/// One `[[upstream]]` entry: a replication this gateway drives as the active peer.
package struct UpstreamSettings: Sendable, Equatable {
    package var name: String
    /// The local database replicated.
    package var database: String
    /// The remote database endpoint, `ws://` or `wss://host[:port]/<remote-db>`, without `/_blipsync`.
    package var url: URL
    package var direction: ReplicationDirection
    /// Keep running and follow changes, rather than stopping once caught up.
    package var continuous: Bool
    /// Collections replicated; a subset of the local database's collections.
    package var collections: [CollectionName]
    /// Replicate only these document IDs; empty means all documents.
    package var documentIDs: [String]
    /// Pull only these Sync Gateway channels; empty means all channels the user can see.
    package var channels: [String]
    package var authentication: UpstreamAuthentication
    /// How the server certificate is trusted; `nil` for `ws://` URLs.
    package var serverTrust: ServerTrust?
    /// Interval of WebSocket pings; `nil` (`heartbeat = "off"`) sends none.
    package var heartbeat: Duration?
    /// Connection attempts before giving up on a transient error; 0 retries forever.
    package var maxAttempts: Int
    /// Upper bound of the exponential back-off between attempts.
    package var maxAttemptWait: Duration
    package var conflictResolver: ConflictResolver
    /// Which replication protocol generations are offered to the server.
    package var replicationProtocol: UpstreamProtocol
    /// Stable identifier of the remote database, so checkpoints survive a change of URL.
    package var remoteUUID: String?
    /// The paired gateway's payload when the upstream is given by `pairing`: its addresses are tried in order
    /// before each connection, and the certificate matching its digests is pinned (`url` is its first address).
    package var pairing: PairingPayload?

    /// Every URL the upstream may be reached at: the pairing payload's addresses, or `url`.
    package var endpointURLs: [URL] {
        guard let pairing else { return [url] }
        return pairing.addresses.indices.compactMap { pairing.url(forAddressAt: $0) }
    }

    package init(
        name: String,
        database: String,
        url: URL,
        direction: ReplicationDirection,
        continuous: Bool,
        collections: [CollectionName],
        documentIDs: [String],
        channels: [String],
        authentication: UpstreamAuthentication,
        serverTrust: ServerTrust?,
        heartbeat: Duration?,
        maxAttempts: Int,
        maxAttemptWait: Duration,
        conflictResolver: ConflictResolver,
        remoteUUID: String?,
        pairing: PairingPayload? = nil,
        replicationProtocol: UpstreamProtocol = .auto
    ) {
        self.name = name
        self.database = database
        self.url = url
        self.direction = direction
        self.continuous = continuous
        self.collections = collections
        self.documentIDs = documentIDs
        self.channels = channels
        self.authentication = authentication
        self.serverTrust = serverTrust
        self.heartbeat = heartbeat
        self.maxAttempts = maxAttempts
        self.maxAttemptWait = maxAttemptWait
        self.conflictResolver = conflictResolver
        self.remoteUUID = remoteUUID
        self.pairing = pairing
        self.replicationProtocol = replicationProtocol
    }
}

/// `type = "push" | "pull" | "push-and-pull"`.
package enum ReplicationDirection: String, Sendable, Equatable, CaseIterable {
    case push
    case pull
    case pushAndPull = "push-and-pull"

    package var pushes: Bool { self != .pull }
    package var pulls: Bool { self != .push }
}

/// `conflict_resolver = "default" | "local-wins" | "remote-wins" | "merge"`.
package enum ConflictResolver: String, Sendable, Equatable, CaseIterable {
    /// Couchbase Lite's rule: a deletion wins, then the longer history, then the higher revision ID.
    case `default`
    case localWins = "local-wins"
    case remoteWins = "remote-wins"
    /// Combine top-level properties of both sides; where both have a property with different
    /// values, the local side wins. A deletion on either side is decided by the default rule.
    case merge
}

/// `protocol = "auto" | "4" | "3"`: the replication protocol generations offered to the server.
package enum UpstreamProtocol: String, Sendable, Equatable, CaseIterable {
    /// Version vectors (CBMobile_4) where the server speaks them, else revision trees (CBMobile_3), as a
    /// Couchbase Lite 4.0 puller offers: Sync Gateway 3.x and 4.x, Edge Server, Couchbase Lite 3.x and 4.x listeners,
    /// another EdgeGateway.
    case auto
    /// Version vectors only: a Couchbase Lite 4.1+ listener, or to insist that versions survive the hop.
    case versionVectors = "4"
    /// Revision trees only (CBMobile_3, then 2): Sync Gateway 2.x/3.x, Edge Server 1.x, Couchbase Lite 3.x.
    case revisionTrees = "3"
}

/// How the gateway authenticates to the upstream server.
package enum UpstreamAuthentication: Sendable, Equatable {
    case none
    /// HTTP Basic, sent preemptively.
    case basic(username: String, password: Secret)
    /// A Sync Gateway session cookie (`Cookie: <cookieName>=<sessionID>`).
    case session(cookieName: String, sessionID: Secret)
    /// A TLS client certificate (absolute PEM paths).
    case clientCertificate(certificate: String, privateKey: String)
    /// A TLS client certificate and key in a PKCS#12 bundle (absolute path), with its password.
    case clientPKCS12(path: String, password: Secret)
}

/// How the upstream server's TLS certificate is trusted (`server_trust`).
package enum ServerTrust: Sendable, Equatable {
    /// Chain to one of these CA certificates (absolute PEM paths); empty means the system roots.
    /// The host name is verified.
    case certificateAuthorities([String])
    /// Accept only a self-signed certificate, whatever its key, like Couchbase Lite's
    /// `acceptOnlySelfSignedServerCertificate`; suited to peers that generate their own identity.
    case selfSignedOnly
    /// Accept only this certificate (absolute path of a PEM or DER file).
    case pinnedCertificate(path: String)
    /// Accept only a certificate whose DER encoding has this SHA-256 digest (64 lowercase hex digits).
    case pinnedSHA256(String)
    /// Accept only the certificate pinned for the URL's `host:port` with `edge-gateway trust add` (trust on
    /// first use, or from a pairing payload).
    case trustStore
}
