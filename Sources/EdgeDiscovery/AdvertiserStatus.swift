/// What the advertiser has achieved so far, for health reports.
package struct AdvertiserStatus: Sendable, Equatable {
    /// The connection to avahi-daemon.
    package enum Daemon: Sendable, Equatable {
        /// `start()` has not connected yet.
        case starting
        /// The D-Bus system bus answers but avahi-daemon is not on it (yet); registration follows when it appears.
        case waiting
        /// The bus or the daemon cannot be reached; the advertiser retries on its own.
        case unavailable(String)
        case running
        case stopped
    }

    /// One advertisement's registration.
    package enum Registration: Sendable, Equatable {
        /// Waiting for the daemon.
        case pending
        /// Probing the network for the name.
        case registering(name: String)
        /// Announced under this name (the wanted one, or an alternative after a collision).
        case registered(name: String)
        /// The daemon refused it; this reason says why.
        case failed(String)
    }

    package struct Service: Sendable, Equatable {
        package var advertisement: ServiceAdvertisement
        package var registration: Registration
    }

    package var daemon: Daemon
    /// In the order the advertisements were given.
    package var services: [Service]

    /// Whether every advertisement is announced.
    package var isFullyRegistered: Bool {
        daemon == .running
            && services.allSatisfy {
                if case .registered = $0.registration { true } else { false }
            }
    }
}
