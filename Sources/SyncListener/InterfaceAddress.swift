#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Resolves a listener's `interface` setting to the address to bind.
enum InterfaceAddress {
    /// An IP address is used as is; otherwise the named interface's first IPv4 address, or its first
    /// IPv6 address when it has no IPv4 one.
    static func resolve(_ interface: String) throws(SyncListenerError) -> String {
        if isIPAddress(interface) {
            return interface
        }
        var head: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&head) == 0, let first = head else {
            throw .interfaceNotFound(interface)
        }
        defer { freeifaddrs(head) }
        var ipv6: String?
        for entry in sequence(first: first, next: { $0.pointee.ifa_next }) {
            guard String(cString: entry.pointee.ifa_name) == interface, let address = entry.pointee.ifa_addr else {
                continue
            }
            switch Int32(address.pointee.sa_family) {
            case AF_INET:
                if let text = numericHost(address, length: socklen_t(MemoryLayout<sockaddr_in>.size)) {
                    return text
                }
            case AF_INET6:
                if ipv6 == nil {
                    ipv6 = numericHost(address, length: socklen_t(MemoryLayout<sockaddr_in6>.size))
                }
            default:
                continue
            }
        }
        guard let ipv6 else {
            throw .interfaceNotFound(interface)
        }
        return ipv6
    }

    static func isIPAddress(_ text: String) -> Bool {
        var ipv4 = in_addr()
        var ipv6 = in6_addr()
        return inet_pton(AF_INET, text, &ipv4) == 1 || inet_pton(AF_INET6, text, &ipv6) == 1
    }

    private static func numericHost(_ address: UnsafeMutablePointer<sockaddr>, length: socklen_t) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(NI_MAXHOST))
        guard getnameinfo(address, length, &buffer, socklen_t(buffer.count), nil, 0, NI_NUMERICHOST) == 0 else {
            return nil
        }
        // IPv6 link-local addresses come back with a `%zone` suffix, which the bind address keeps.
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
