import CAvahi

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A service found by browsing, resolved to an address.
package struct DiscoveredService: Sendable, Equatable {
    package var name: String
    package var type: String
    package var domain: String
    /// The local interface it was seen on, such as `eth0`.
    package var interface: String
    /// The host name it announced, such as `gateway.local`.
    package var host: String
    package var address: String
    package var port: Int
    /// In the order they were announced.
    package var txt: [TXTEntry]

    /// The value of the first TXT record with this key; `""` for a bare key.
    package func txtValue(_ key: String) -> String? {
        txt.first { $0.key == key }.map { $0.value ?? "" }
    }
}

/// Lists the services of one type that answer on the local networks, through avahi-daemon.
package enum ServiceBrowser {
    /// Browses for `duration` and returns what was found and resolved, sorted by name and address. A service
    /// seen on several interfaces or address families is listed once for each.
    package static func browse(type: String, for duration: Duration) async throws(DiscoveryError)
        -> [DiscoveredService]
    {
        let session = try BrowseSession(type: type)
        defer { session.close() }
        // Cancellation ends the wait early and returns what was found so far.
        try? await Task.sleep(for: duration)
        return try session.finish()
    }
}

/// One browse: a client, a service browser, and a resolver per service seen. Callbacks run on the event loop
/// thread with its lock held; `finish` and `close` read and free everything only after the thread has ended,
/// which is what makes the unchecked sendability sound.
private final class BrowseSession: @unchecked Sendable {
    private struct Key: Hashable {
        var interface: AvahiIfIndex
        var protocolFamily: AvahiProtocol
        var name: String
        var type: String
        var domain: String
    }

    private let loop: AvahiEventLoop
    private var client: OpaquePointer?
    private var browser: OpaquePointer?
    private var resolvers: [Key: OpaquePointer] = [:]
    private var found: [Key: DiscoveredService] = [:]
    private var failure: String?

    init(type: String) throws(DiscoveryError) {
        loop = try AvahiEventLoop()
        let context = Unmanaged.passUnretained(self).toOpaque()
        var error: Int32 = 0
        // Without AVAHI_CLIENT_NO_FAIL a missing daemon is an immediate error, which is what a one-shot command
        // should report.
        client = avahi_client_new(
            loop.api, AvahiClientFlags(0),
            { client, state, context in
                guard let context, state == AVAHI_CLIENT_FAILURE else { return }
                Unmanaged<BrowseSession>.fromOpaque(context).takeUnretainedValue().failure =
                    avahiErrorMessage(client: client)
            },
            context, &error)
        guard let client else { throw .daemonUnavailable(avahiErrorMessage(error)) }
        browser = avahi_service_browser_new(
            client, CAvahi_interfaceUnspecified, CAvahi_protocolUnspecified, type, nil, AvahiLookupFlags(0),
            { _, interface, protocolFamily, event, name, type, domain, _, context in
                guard let context else { return }
                Unmanaged<BrowseSession>.fromOpaque(context).takeUnretainedValue().browserEvent(
                    event, interface: interface, protocolFamily: protocolFamily, name: name, type: type,
                    domain: domain)
            },
            context)
        guard browser != nil else {
            let reason = avahiErrorMessage(client: client)
            close()
            throw .browseFailed("\(reason) (service type \"\(type)\")")
        }
        do {
            try loop.start()
        } catch {
            close()
            throw error
        }
    }

    /// Stops the event loop and returns the results, or the failure that ended browsing.
    func finish() throws(DiscoveryError) -> [DiscoveredService] {
        loop.stop()
        if let failure {
            throw .browseFailed(failure)
        }
        return found.values.sorted { ($0.name, $0.address, $0.interface) < ($1.name, $1.address, $1.interface) }
    }

    /// Frees every avahi object; the loop is stopped first, so no callback can run meanwhile.
    func close() {
        loop.stop()
        for resolver in resolvers.values {
            avahi_service_resolver_free(resolver)
        }
        resolvers.removeAll()
        if let browser {
            avahi_service_browser_free(browser)
            self.browser = nil
        }
        if let client {
            avahi_client_free(client)
            self.client = nil
        }
    }

    private func browserEvent(
        _ event: AvahiBrowserEvent, interface: AvahiIfIndex, protocolFamily: AvahiProtocol,
        name: UnsafePointer<CChar>?, type: UnsafePointer<CChar>?, domain: UnsafePointer<CChar>?
    ) {
        switch event {
        case AVAHI_BROWSER_NEW:
            guard let client, let name, let type, let domain else { return }
            let key = Key(
                interface: interface, protocolFamily: protocolFamily, name: String(cString: name),
                type: String(cString: type), domain: String(cString: domain))
            guard resolvers[key] == nil else { return }
            // The resolver stays open until the end, so a service that changes its TXT records while we
            // browse is reported with the latest ones.
            let resolver = avahi_service_resolver_new(
                client, interface, protocolFamily, name, type, domain, protocolFamily, AvahiLookupFlags(0),
                { _, interface, protocolFamily, event, name, type, domain, host, address, port, txt, _, context in
                    guard let context, event == AVAHI_RESOLVER_FOUND else { return }
                    Unmanaged<BrowseSession>.fromOpaque(context).takeUnretainedValue().resolved(
                        interface: interface, protocolFamily: protocolFamily, name: name, type: type,
                        domain: domain, host: host, address: address, port: port, txt: txt)
                },
                Unmanaged.passUnretained(self).toOpaque())
            if let resolver {
                resolvers[key] = resolver
            }
        case AVAHI_BROWSER_REMOVE:
            guard let name, let type, let domain else { return }
            let key = Key(
                interface: interface, protocolFamily: protocolFamily, name: String(cString: name),
                type: String(cString: type), domain: String(cString: domain))
            found[key] = nil
            if let resolver = resolvers.removeValue(forKey: key) {
                avahi_service_resolver_free(resolver)
            }
        case AVAHI_BROWSER_FAILURE:
            failure = avahiErrorMessage(client: client)
        default:
            break
        }
    }

    private func resolved(
        interface: AvahiIfIndex, protocolFamily: AvahiProtocol, name: UnsafePointer<CChar>?,
        type: UnsafePointer<CChar>?, domain: UnsafePointer<CChar>?, host: UnsafePointer<CChar>?,
        address: UnsafePointer<AvahiAddress>?, port: UInt16, txt: UnsafeMutablePointer<AvahiStringList>?
    ) {
        guard let name, let type, let domain, let host, let address else { return }
        var addressText = [CChar](repeating: 0, count: Int(AVAHI_ADDRESS_STR_MAX))
        avahi_address_snprint(&addressText, addressText.count, address)
        var interfaceName = [CChar](repeating: 0, count: Int(IF_NAMESIZE) + 1)
        let interfaceText =
            interface >= 0 && if_indextoname(UInt32(interface), &interfaceName) != nil
            ? Self.string(nulTerminated: interfaceName) : String(interface)
        var entries: [TXTEntry] = []
        var item = txt
        while let current = item {
            let bytes = UnsafeBufferPointer(
                start: avahi_string_list_get_text(current), count: avahi_string_list_get_size(current))
            entries.append(TXTEntry(parsing: String(decoding: bytes, as: UTF8.self)))
            item = avahi_string_list_get_next(current)
        }
        // avahi builds received lists by prepending, so they arrive last string first.
        entries.reverse()
        let service = DiscoveredService(
            name: String(cString: name), type: String(cString: type), domain: String(cString: domain),
            interface: interfaceText, host: String(cString: host), address: Self.string(nulTerminated: addressText),
            port: Int(port), txt: entries)
        let key = Key(
            interface: interface, protocolFamily: protocolFamily, name: service.name, type: service.type,
            domain: service.domain)
        found[key] = service
    }

    private static func string(nulTerminated buffer: [CChar]) -> String {
        let bytes = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        return String(decoding: bytes, as: UTF8.self)
    }
}
