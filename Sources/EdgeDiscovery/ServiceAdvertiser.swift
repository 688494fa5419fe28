import CAvahi
import Logging
import Synchronization

/// Publishes DNS-SD services through the host's avahi-daemon (libavahi-client over the D-Bus system bus) and
/// keeps them published: it renames a service whose name collides, registers everything again after the
/// daemon restarts, and waits (retrying) while there is no daemon or no bus. Nothing here ever stops the node:
/// failures only show in `status` and in one log line per change.
///
/// Call `start()` once, then `stop()` to withdraw the services.
///
/// Thread safety: the avahi objects and the properties marked below are only touched on avahi's event loop
/// thread (callbacks run there with the loop's lock held) or by `start()`/`stop()` with that lock held or after
/// the thread has ended; `status` has a lock of its own so that health reads never wait for avahi.
package final class ServiceAdvertiser: @unchecked Sendable {
    /// One advertisement and its avahi entry group. A class, so that it can be the group callback's context.
    final class Registration {
        unowned let advertiser: ServiceAdvertiser
        let index: Int
        let advertisement: ServiceAdvertisement
        /// The name in use: the wanted one, or the latest alternative after collisions.
        var name: String
        var group: OpaquePointer?

        init(advertiser: ServiceAdvertiser, index: Int, advertisement: ServiceAdvertisement) {
            self.advertiser = advertiser
            self.index = index
            self.advertisement = advertisement
            self.name = advertisement.name
        }
    }

    private let loop: AvahiEventLoop
    private let logger: Logger
    private let retryDelay: Duration
    private let reported: Mutex<AdvertiserStatus>
    private let lifecycle = Mutex<Lifecycle>(.created)

    private enum Lifecycle {
        case created, started, stopped
    }

    // Event-loop state: see the type's thread-safety note.
    private var registrations: [Registration] = []
    private var client: OpaquePointer?
    private var retryTimer: OpaquePointer?
    private var stopping = false

    /// Bounds the renaming loop when the daemon keeps reporting local conflicts.
    private static let maximumAlternativeNames = 64

    package init(
        advertisements: [ServiceAdvertisement], logger: Logger, retryDelay: Duration = .seconds(5)
    ) throws(DiscoveryError) {
        self.loop = try AvahiEventLoop()
        self.logger = logger
        self.retryDelay = retryDelay
        self.reported = Mutex(
            AdvertiserStatus(
                daemon: .starting,
                services: advertisements.map { .init(advertisement: $0, registration: .pending) }
            )
        )
        registrations = advertisements.enumerated().map {
            Registration(advertiser: self, index: $0.offset, advertisement: $0.element)
        }
    }

    deinit {
        stop()
    }

    package var status: AdvertiserStatus {
        reported.withLock { $0 }
    }

    /// Connects to avahi-daemon (or starts waiting for it) and registers every advertisement once it answers.
    package func start() throws(DiscoveryError) {
        let shouldStart = lifecycle.withLock { state in
            guard case .created = state else { return false }
            state = .started
            return true
        }
        guard shouldStart else { return }
        try loop.start()
        loop.withLock { connect() }
    }

    /// Withdraws every service and disconnects. Safe to call more than once.
    package func stop() {
        let wasStarted = lifecycle.withLock { state in
            defer { state = .stopped }
            if case .started = state { return true } else { return false }
        }
        guard wasStarted else { return }
        loop.withLock { stopping = true }
        loop.stop()
        // The thread has ended: nothing else touches the avahi objects now. Freeing a group withdraws its
        // records with goodbye packets, through a synchronous D-Bus call.
        if let retryTimer {
            loop.cancelTimer(retryTimer)
            self.retryTimer = nil
        }
        freeGroups()
        if let client {
            avahi_client_free(client)
            self.client = nil
        }
        reported.withLock { status in
            status.daemon = .stopped
            for index in status.services.indices {
                status.services[index].registration = .pending
            }
        }
        logger.info("DNS-SD advertising stopped")
    }

    // MARK: - Event loop

    /// Creates the client. `AVAHI_CLIENT_NO_FAIL` makes a missing daemon a wait (state CONNECTING) instead of an
    /// error, and carries the client through daemon restarts; only an unreachable bus fails here.
    private func connect() {
        var error: Int32 = 0
        let context = Unmanaged.passUnretained(self).toOpaque()
        let created = avahi_client_new(
            loop.api, AVAHI_CLIENT_NO_FAIL,
            { client, state, context in
                guard let context else { return }
                Unmanaged<ServiceAdvertiser>.fromOpaque(context).takeUnretainedValue()
                    .clientChanged(client, state: state)
            },
            context, &error)
        guard let created else {
            setDaemon(.unavailable(avahiErrorMessage(error)))
            scheduleReconnect()
            return
        }
        client = created
    }

    /// Called on the loop thread, also from inside `avahi_client_new` before `client` is set: hence the
    /// client argument is used, not the property.
    private func clientChanged(_ client: OpaquePointer?, state: AvahiClientState) {
        guard !stopping, let client else { return }
        switch state {
        case AVAHI_CLIENT_S_RUNNING:
            setDaemon(.running)
            for registration in registrations {
                register(registration, client: client)
            }
        case AVAHI_CLIENT_S_COLLISION, AVAHI_CLIENT_S_REGISTERING:
            // The daemon is renegotiating the host name; services are registered again once it is running.
            for registration in registrations {
                if let group = registration.group {
                    avahi_entry_group_reset(group)
                }
                setRegistration(registration, .pending)
            }
        case AVAHI_CLIENT_CONNECTING:
            // The daemon is gone (or not started yet); the groups it held died with it.
            freeGroups()
            markAllPending()
            setDaemon(.waiting)
        case AVAHI_CLIENT_FAILURE:
            // Typically the bus itself went away; this client is finished and a new one is made later.
            let reason = avahiErrorMessage(client: client)
            freeGroups()
            markAllPending()
            setDaemon(.unavailable(reason))
            scheduleReconnect()
        default:
            break
        }
    }

    /// (Re)registers one advertisement under its current name, renaming on a local conflict.
    private func register(_ registration: Registration, client: OpaquePointer) {
        if let group = registration.group {
            avahi_entry_group_reset(group)
        } else {
            let context = Unmanaged.passUnretained(registration).toOpaque()
            registration.group = avahi_entry_group_new(
                client,
                { group, state, context in
                    guard let context else { return }
                    let registration = Unmanaged<Registration>.fromOpaque(context).takeUnretainedValue()
                    registration.advertiser.entryGroupChanged(registration, group: group, state: state)
                },
                context)
        }
        guard let group = registration.group else {
            fail(registration, reason: avahiErrorMessage(client: client))
            return
        }
        let advertisement = registration.advertisement
        var txt: UnsafeMutablePointer<AvahiStringList>?
        // avahi_string_list_add prepends; adding in reverse keeps the published order.
        for entry in advertisement.txt.reversed() {
            txt = avahi_string_list_add(txt, entry.description)
        }
        defer { avahi_string_list_free(txt) }
        for _ in 0..<Self.maximumAlternativeNames {
            let result = avahi_entry_group_add_service_strlst(
                group, CAvahi_interfaceUnspecified, CAvahi_protocolUnspecified, AvahiPublishFlags(0),
                registration.name, advertisement.type, nil, nil, UInt16(advertisement.port), txt)
            if result == Int32(AVAHI_ERR_COLLISION) {
                rename(registration)
                continue
            }
            guard result >= 0 else {
                fail(registration, reason: avahiErrorMessage(result))
                return
            }
            let committed = avahi_entry_group_commit(group)
            guard committed >= 0 else {
                fail(registration, reason: avahiErrorMessage(committed))
                return
            }
            setRegistration(registration, .registering(name: registration.name))
            return
        }
        fail(registration, reason: "every alternative name collided")
    }

    private func entryGroupChanged(
        _ registration: Registration, group: OpaquePointer?, state: AvahiEntryGroupState
    ) {
        guard !stopping, let group else { return }
        switch state {
        case AVAHI_ENTRY_GROUP_ESTABLISHED:
            setRegistration(registration, .registered(name: registration.name))
            logger.info(
                "DNS-SD service registered",
                metadata: [
                    "name": "\(registration.name)", "type": "\(registration.advertisement.type)",
                    "port": "\(registration.advertisement.port)",
                ])
        case AVAHI_ENTRY_GROUP_COLLISION:
            // Another host announced the name while we probed: take the next alternative and probe again.
            rename(registration)
            guard let client = avahi_entry_group_get_client(group) else { return }
            register(registration, client: client)
        case AVAHI_ENTRY_GROUP_FAILURE:
            // A daemon that goes away fails its groups too; the client's state change handles that case.
            let client = avahi_entry_group_get_client(group)
            guard avahi_client_get_state(client) == AVAHI_CLIENT_S_RUNNING else { return }
            fail(registration, reason: avahiErrorMessage(client: client))
        default:
            break
        }
    }

    private func rename(_ registration: Registration) {
        let previous = registration.name
        if let alternative = avahi_alternative_service_name(previous) {
            registration.name = String(cString: alternative)
            avahi_free(alternative)
        }
        logger.notice(
            "DNS-SD name in use on the network, renamed",
            metadata: ["previous": "\(previous)", "name": "\(registration.name)"])
    }

    private func fail(_ registration: Registration, reason: String) {
        setRegistration(registration, .failed(reason))
        logger.warning(
            "DNS-SD registration failed",
            metadata: [
                "name": "\(registration.name)", "type": "\(registration.advertisement.type)", "reason": "\(reason)",
            ])
    }

    private func freeGroups() {
        for registration in registrations {
            if let group = registration.group {
                avahi_entry_group_free(group)
                registration.group = nil
            }
        }
    }

    private func scheduleReconnect() {
        guard retryTimer == nil else { return }
        retryTimer = loop.scheduleTimer(
            after: retryDelay, userdata: Unmanaged.passUnretained(self).toOpaque()
        ) { _, context in
            guard let context else { return }
            Unmanaged<ServiceAdvertiser>.fromOpaque(context).takeUnretainedValue().reconnect()
        }
    }

    /// Runs on the loop thread when the retry timer fires; the failed client is freed here rather than in its
    /// own callback.
    private func reconnect() {
        if let retryTimer {
            loop.cancelTimer(retryTimer)
            self.retryTimer = nil
        }
        guard !stopping else { return }
        if let client {
            avahi_client_free(client)
            self.client = nil
        }
        connect()
    }

    // MARK: - Reported status

    private func markAllPending() {
        for registration in registrations {
            setRegistration(registration, .pending)
        }
    }

    private func setRegistration(_ registration: Registration, _ state: AdvertiserStatus.Registration) {
        reported.withLock { $0.services[registration.index].registration = state }
    }

    /// Records the daemon state and logs it only when it changes, so a node without avahi-daemon logs one line
    /// instead of one per retry.
    private func setDaemon(_ daemon: AdvertiserStatus.Daemon) {
        let previous = reported.withLock { status in
            defer { status.daemon = daemon }
            return status.daemon
        }
        guard previous != daemon else { return }
        switch daemon {
        case .running:
            logger.info("connected to avahi-daemon, registering DNS-SD services")
        case .waiting:
            logger.warning(
                "avahi-daemon is not running: DNS-SD advertising waits for it; sync is not affected")
        case .unavailable(let reason):
            logger.warning(
                "avahi-daemon cannot be reached: DNS-SD advertising is off until it can; sync is not affected",
                metadata: [
                    "reason": "\(reason)",
                    "hint": "start avahi-daemon and make the D-Bus system bus reachable (DBUS_SYSTEM_BUS_ADDRESS)",
                ])
        case .starting, .stopped:
            break
        }
    }
}
