import Foundation
import ReplicationProtocol

/// A replication client this listener turned away because it and the client share no way of replicating: no
/// common subprotocol at the upgrade, or a pull asking for the other kind of document versioning. Kept for the
/// status page and logged at notice level, since the device itself only shows a sync error nobody on site reads.
package struct TurnedAwayClient: Sendable, Equatable {
    package enum Reason: String, Sendable, CaseIterable {
        /// The upgrade offered no subprotocol this listener serves (403).
        case noCommonSubprotocol = "no_common_subprotocol"
        /// A `subChanges` asked for versioning the connection's subprotocol does not use (LiteCore 501).
        case incompatibleVersioning = "incompatible_versioning"
    }

    package var reason: Reason
    package var peer: String
    package var userAgent: String?
    /// The `Sec-WebSocket-Protocol` offer, or for a versioning refusal the subprotocol chosen and the versioning
    /// asked for.
    package var offered: String
    /// What the operator can do about it.
    package var hint: String
    package var at: Date

    /// How many are kept for the status page, newest last.
    static let kept = 10

    /// The hint for an upgrade whose offer matched nothing this listener serves.
    static func hint(forOffer offer: [String]) -> String {
        let versions = offer.compactMap { ReplicationSubprotocol(rawValue: $0).replicationVersion }
        let newest = ReplicationSubprotocol.served.compactMap(\.replicationVersion).max() ?? 0
        let oldest = ReplicationSubprotocol.served.compactMap(\.replicationVersion).min() ?? 0
        if versions.isEmpty {
            return "not a Couchbase Lite replicator: it offered no BLIP_3+CBMobile subprotocol"
        }
        if let offered = versions.max(), offered > newest {
            return "an app on a Couchbase Lite SDK newer than this gateway speaks (CBMobile_\(offered); this gateway "
                + "speaks CBMobile_\(oldest) to \(newest), Couchbase Lite 2.x to 4.x): update the gateway"
        }
        return "an app on a Couchbase Lite SDK older than this gateway speaks (CBMobile_\(versions.max() ?? 0)): "
            + "update the app to Couchbase Lite 2.x or later"
    }

    /// The hint for a pull that asked for the versioning its connection's subprotocol does not use.
    static func hint(versioningAsked asked: String, on subprotocol: String) -> String {
        if ReplicationSubprotocol(rawValue: subprotocol).usesVersionVectors {
            return "the client chose \(subprotocol) but asked for \(asked) documents; a Couchbase Lite 3.x app "
                + "offers CBMobile_3, which this gateway serves"
        }
        return "the client chose \(subprotocol) but asked for \(asked) documents: a Couchbase Lite 4 app that did "
            + "not offer CBMobile_4 first; this gateway serves CBMobile_4"
    }
}
