import EdgeConfig
import EdgeDiscovery
import EdgeIdentity
import EdgePairing
import Logging
import ReplicationProtocol
import ServiceLifecycle
import SyncListener
import Synchronization

/// Advertises every listener with `dns_sd = true` over DNS-SD once it is bound (the advertisement carries the
/// real port and certificate digest), withdraws the services on shutdown, and reports a `discovery` component:
/// up when everything is registered, degraded otherwise. It never fails the node: sync does not need it.
final class DiscoveryService: Service, HealthReporting {
    private enum State {
        /// Waiting for the listeners to bind.
        case preparing
        case advertising(ServiceAdvertiser, [ServiceAdvertisement])
        case failed(String)
        case stopped
    }

    /// A listener with `dns_sd = true`, and how it is advertised.
    struct AdvertisedListener {
        let listener: SyncListener
        let discovery: ServiceDiscoverySettings
    }

    let listeners: [AdvertisedListener]
    let nodeID: NodeID
    let logger: Logger
    private let state = Mutex<State>(.preparing)

    init(listeners: [AdvertisedListener], nodeID: NodeID, logger: Logger) {
        self.listeners = listeners
        self.nodeID = nodeID
        self.logger = logger
    }

    func run() async throws {
        let advertisements = await currentAdvertisements()
        do {
            let advertiser = try ServiceAdvertiser(advertisements: advertisements, logger: logger)
            try advertiser.start()
            state.withLock { $0 = .advertising(advertiser, advertisements) }
            try? await gracefulShutdown()
        } catch {
            logger.warning("DNS-SD advertising unavailable; sync is not affected", metadata: ["reason": "\(error)"])
            state.withLock { $0 = .failed("\(error)") }
            try? await gracefulShutdown()
        }
        // The advertiser may have been replaced since (`refreshCertificates`): stop the one in force.
        state.withLock { state in
            if case .advertising(let advertiser, _) = state {
                advertiser.stop()
            }
            state = .stopped
        }
    }

    /// Advertises again when a listener's certificate was reloaded, so that the `s256` record a browsing app
    /// pins is the one new connections get. The swap happens under the state lock, so that two reloads at
    /// once (a poll and a SIGHUP) cannot leave two advertisers announcing the same name.
    func refreshCertificates() async {
        let advertisements = await currentAdvertisements()
        let outcome: Result<Bool, any Error> = state.withLock { state in
            guard case .advertising(let advertiser, let advertised) = state, advertisements != advertised else {
                return .success(false)
            }
            do {
                let replacement = try ServiceAdvertiser(advertisements: advertisements, logger: logger)
                advertiser.stop()
                try replacement.start()
                state = .advertising(replacement, advertisements)
                return .success(true)
            } catch {
                state = .failed("\(error)")
                return .failure(error)
            }
        }
        switch outcome {
        case .success(true): logger.info("DNS-SD records updated for the reloaded certificate")
        case .success(false): break
        case .failure(let error):
            logger.warning("DNS-SD advertising unavailable; sync is not affected", metadata: ["reason": "\(error)"])
        }
    }

    private func currentAdvertisements() async -> [ServiceAdvertisement] {
        var advertisements: [ServiceAdvertisement] = []
        for advertised in listeners {
            guard let port = await advertised.listener.boundPort() else {
                // The listener failed to start; its own health entry says why.
                continue
            }
            do {
                advertisements.append(try advertisement(for: advertised, port: port))
            } catch {
                logger.warning(
                    "listener not advertised",
                    metadata: ["listener": "\(advertised.listener.configuration.name)", "reason": "\(error)"])
            }
        }
        return advertisements
    }

    /// The TXT records let a browsing app choose and trust a gateway before connecting: which node, which
    /// databases, whether to use `wss://` and which certificate to pin (as in a pairing payload), and which
    /// replication protocol it speaks.
    func advertisement(for advertised: AdvertisedListener, port: Int) throws -> ServiceAdvertisement {
        let listener = advertised.listener
        let discovery = advertised.discovery
        var txt = [
            TXTEntry(key: "id", value: nodeID.description),
            TXTEntry(key: "db", value: listener.configuration.databases.map(\.name).joined(separator: ",")),
            TXTEntry(key: "tls", value: listener.identity == nil ? "off" : "on"),
        ]
        if let identity = listener.identity {
            txt.append(TXTEntry(key: "s256", value: Base64URL.encode(identity.sha256Fingerprint.bytes)))
        }
        txt.append(TXTEntry(key: "proto", value: ReplicationSubprotocol.cbMobile3.rawValue))
        return try ServiceAdvertisement(
            name: discovery.instanceName, type: discovery.serviceType, port: port, txt: txt)
    }

    func healthReports() async -> [ComponentHealth] {
        let state = state.withLock { $0 }
        switch state {
        case .preparing:
            return [ComponentHealth(name: "dns-sd", kind: .discovery, status: .degraded, reason: "not advertising yet")]
        case .failed(let reason):
            return [ComponentHealth(name: "dns-sd", kind: .discovery, status: .degraded, reason: reason)]
        case .stopped:
            return [ComponentHealth(name: "dns-sd", kind: .discovery, status: .degraded, reason: "stopped")]
        case .advertising(let advertiser, _):
            return [ComponentHealth(status: advertiser.status)]
        }
    }
}

extension ComponentHealth {
    init(status: AdvertiserStatus) {
        var details: [String: HealthValue] = [:]
        var problems: [String] = []
        let daemon: String
        switch status.daemon {
        case .starting: daemon = "starting"
        case .waiting:
            daemon = "waiting"
            problems.append("avahi-daemon is not running")
        case .unavailable(let reason):
            daemon = "unavailable"
            problems.append("avahi-daemon unreachable: \(reason)")
        case .running: daemon = "running"
        case .stopped: daemon = "stopped"
        }
        details["daemon"] = .string(daemon)
        for service in status.services {
            let prefix = "service.\(service.advertisement.name)"
            details["\(prefix).type"] = .string(service.advertisement.type)
            details["\(prefix).port"] = .integer(service.advertisement.port)
            switch service.registration {
            case .pending:
                details["\(prefix).state"] = "pending"
            case .registering(let name):
                details["\(prefix).state"] = "registering"
                details["\(prefix).registeredName"] = .string(name)
            case .registered(let name):
                details["\(prefix).state"] = "registered"
                details["\(prefix).registeredName"] = .string(name)
            case .failed(let reason):
                details["\(prefix).state"] = "failed"
                problems.append("\(service.advertisement.name): \(reason)")
            }
        }
        if problems.isEmpty, !status.isFullyRegistered {
            problems.append("registering")
        }
        self.init(
            name: "dns-sd", kind: .discovery, status: problems.isEmpty ? .up : .degraded,
            reason: problems.isEmpty ? nil : problems.joined(separator: "; "), details: details)
    }
}
