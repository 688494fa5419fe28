#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// An IPv4 or IPv6 address in its canonical text form.
package struct IPAddressLiteral: Sendable, Hashable, CustomStringConvertible {
    package enum Family: Sendable, Hashable {
        case ipv4
        case ipv6
    }

    package let family: Family
    /// Canonical text, e.g. `192.168.1.10` or `fd00::1` (no zone).
    package let description: String
    private let bytes: [UInt8]

    /// Parses an IP literal; `nil` for anything else, including IPv6 with a `%zone`.
    package init?(_ text: String) {
        var ipv4 = in_addr()
        var ipv6 = in6_addr()
        if inet_pton(AF_INET, text, &ipv4) == 1 {
            self.init(family: .ipv4, bytes: withUnsafeBytes(of: &ipv4) { Array($0) })
        } else if inet_pton(AF_INET6, text, &ipv6) == 1 {
            self.init(family: .ipv6, bytes: withUnsafeBytes(of: &ipv6) { Array($0) })
        } else {
            return nil
        }
    }

    init(family: Family, bytes: [UInt8]) {
        self.family = family
        self.bytes = bytes
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        bytes.withUnsafeBytes { raw in
            _ = inet_ntop(
                family == .ipv4 ? AF_INET : AF_INET6, raw.baseAddress, &text, socklen_t(text.count))
        }
        self.description = String(
            decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    package var isLoopback: Bool {
        switch self.family {
        case .ipv4: self.bytes[0] == 127
        case .ipv6: self.bytes == [UInt8](repeating: 0, count: 15) + [1]
        }
    }

    /// `fe80::/10`: usable only with a zone naming the interface on the device's side, which a payload made on
    /// the gateway cannot know.
    package var isIPv6LinkLocal: Bool {
        self.family == .ipv6 && self.bytes[0] == 0xFE && self.bytes[1] & 0xC0 == 0x80
    }

    /// `0.0.0.0` or `::`: "all addresses", never a destination.
    package var isUnspecified: Bool {
        self.bytes.allSatisfy { $0 == 0 }
    }
}

/// An address assigned to one of this host's network interfaces.
package struct InterfaceAddress: Sendable, Hashable {
    package let interfaceName: String
    package let address: IPAddressLiteral

    package init(interfaceName: String, address: IPAddressLiteral) {
        self.interfaceName = interfaceName
        self.address = address
    }

    /// Every IPv4 and IPv6 address of every interface that is up, in the system's order.
    package static func all() -> [InterfaceAddress] {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0, let first = list else { return [] }
        defer { freeifaddrs(list) }
        var result: [InterfaceAddress] = []
        for entry in sequence(first: first, next: { $0.pointee.ifa_next }) {
            guard let socketAddress = entry.pointee.ifa_addr,
                entry.pointee.ifa_flags & UInt32(IFF_UP) != 0
            else { continue }
            let name = String(cString: entry.pointee.ifa_name)
            switch Int32(socketAddress.pointee.sa_family) {
            case AF_INET:
                let bytes = socketAddress.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { pointer in
                    withUnsafeBytes(of: pointer.pointee.sin_addr) { Array($0) }
                }
                result.append(
                    InterfaceAddress(interfaceName: name, address: .init(family: .ipv4, bytes: bytes)))
            case AF_INET6:
                let bytes = socketAddress.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { pointer in
                    withUnsafeBytes(of: pointer.pointee.sin6_addr) { Array($0) }
                }
                result.append(
                    InterfaceAddress(interfaceName: name, address: .init(family: .ipv6, bytes: bytes)))
            default:
                continue
            }
        }
        return result
    }

    /// The address to bind for a listener's `interface` setting: an IP literal as given, else the named
    /// interface's first IPv4 address, else its first IPv6 one. A link-local IPv6 address gets the interface as
    /// its zone, without which it cannot be bound. `nil` when no interface by that name has an address.
    package static func bindAddress(
        forListenerInterface interface: String,
        among candidates: [InterfaceAddress] = InterfaceAddress.all()
    ) -> String? {
        if IPAddressLiteral(String(interface.prefix { $0 != "%" })) != nil {
            return interface
        }
        let own = candidates.filter { $0.interfaceName == interface }.map(\.address)
        if let ipv4 = own.first(where: { $0.family == .ipv4 }) {
            return ipv4.description
        }
        guard let ipv6 = own.first else { return nil }
        return ipv6.isIPv6LinkLocal ? "\(ipv6)%\(interface)" : ipv6.description
    }

    /// The addresses a device could dial to reach a listener bound to `interface` (an IP literal or an interface
    /// name, as in the listener configuration).
    ///
    /// A specific address is its own answer. `0.0.0.0` means every IPv4 address and `::` every address; an
    /// interface name means that interface's addresses. Loopback and IPv6 link-local addresses are left out:
    /// neither can be dialled from a phone (link-local needs the phone's own zone). IPv4 comes first because it
    /// is what most site networks route.
    package static func reachableAddresses(
        forListenerInterface interface: String,
        among candidates: [InterfaceAddress] = InterfaceAddress.all()
    ) -> [IPAddressLiteral] {
        let selected: [IPAddressLiteral]
        if let literal = IPAddressLiteral(interface) {
            guard literal.isUnspecified else { return [literal] }
            selected = candidates.map(\.address).filter { literal.family == .ipv6 || $0.family == .ipv4 }
        } else {
            selected = candidates.filter { $0.interfaceName == interface }.map(\.address)
        }
        var seen: Set<IPAddressLiteral> = []
        let usable = selected.filter { !$0.isLoopback && !$0.isIPv6LinkLocal && !$0.isUnspecified }
            .filter { seen.insert($0).inserted }
        return usable.filter { $0.family == .ipv4 } + usable.filter { $0.family == .ipv6 }
    }
}
