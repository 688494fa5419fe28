import EdgeConfig
import EdgeIdentity
import EdgePairing
import Logging
import NetworkInterfaces
import ServiceLifecycle
import SyncListener

/// Pairing payloads of the TLS listeners, built from their live identities and bound ports: logged once each
/// listener is up, and served to admin screens by the ops endpoint.
struct PairingService: Service {
    struct Entry: Sendable, Encodable {
        var listener: String
        var database: String
        var payload: String
        var sha256: String
    }

    let listeners: [SyncListener]
    let nodeName: String
    let nodeID: NodeID
    /// Set when this start generated the TLS identity: a fresh installation, whose operator needs to know how
    /// to pair the first device.
    let identityIsNew: Bool
    let logger: Logger

    /// How an operator of the shipped container prints the QR code.
    static let qrCodeHint =
        "to pair a device, print the QR code with `docker compose exec gateway edge-gateway pair` "
        + "(outside a container: `edge-gateway pair --config FILE`), or open /pairing.svg on the ops port"

    func run() async throws {
        let entries = await entries()
        for entry in entries {
            logger.info(
                "pairing payload",
                metadata: [
                    "listener": "\(entry.listener)", "database": "\(entry.database)", "payload": "\(entry.payload)",
                    "sha256": "\(entry.sha256)",
                ]
            )
        }
        if identityIsNew, !entries.isEmpty {
            logger.notice("\(Self.qrCodeHint)")
        }
        for listener in listeners where listener.identity == nil {
            logger.notice(
                "listener has TLS off: there is no certificate digest to pair with",
                metadata: ["listener": "\(listener.configuration.name)"])
        }
        try? await gracefulShutdown()
    }

    /// One entry per TLS listener and served database; listeners that are not bound (yet) are left out.
    func entries() async -> [Entry] {
        var entries: [Entry] = []
        for listener in listeners {
            guard let identity = listener.identity, let port = await listener.boundPort() else { continue }
            let addresses = InterfaceAddress.reachableAddresses(forListenerInterface: listener.configuration.interface)
                .map(\.description)
            for database in listener.configuration.databases.map(\.name) {
                do {
                    let payload = try PairingPayload(
                        identity: identity,
                        addresses: addresses,
                        port: port,
                        database: database,
                        nodeName: nodeName,
                        nodeID: nodeID.uuid
                    )
                    entries.append(
                        Entry(
                            listener: listener.configuration.name,
                            database: database,
                            payload: payload.uriString,
                            sha256: payload.sha256ColonHex
                        )
                    )
                } catch {
                    logger.warning(
                        "no pairing payload",
                        metadata: [
                            "listener": "\(listener.configuration.name)", "database": "\(database)",
                            "reason": "\(error)",
                        ]
                    )
                }
            }
        }
        return entries
    }
}
