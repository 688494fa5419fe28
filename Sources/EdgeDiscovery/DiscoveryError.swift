import CAvahi

/// Why advertising or browsing could not start.
package enum DiscoveryError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A name, port or TXT record that DNS-SD cannot carry.
    case invalidAdvertisement(String)
    /// avahi could not set up its event loop thread.
    case eventLoopUnavailable
    /// No avahi-daemon answered on the D-Bus system bus.
    case daemonUnavailable(String)
    /// The daemon refused to browse, for example for a malformed service type.
    case browseFailed(String)

    package var description: String {
        switch self {
        case .invalidAdvertisement(let reason):
            "cannot advertise: \(reason)"
        case .eventLoopUnavailable:
            "cannot start avahi's event loop thread"
        case .daemonUnavailable(let reason):
            "cannot reach avahi-daemon: \(reason). DNS-SD needs avahi-daemon running and its D-Bus system bus "
                + "reachable (DBUS_SYSTEM_BUS_ADDRESS, default unix:path=/run/dbus/system_bus_socket)"
        case .browseFailed(let reason):
            "cannot browse: \(reason)"
        }
    }
}

/// avahi's message for an error code.
func avahiErrorMessage(_ code: Int32) -> String {
    String(cString: avahi_strerror(code))
}

/// avahi's message for a client's last error.
func avahiErrorMessage(client: OpaquePointer?) -> String {
    avahiErrorMessage(avahi_client_errno(client))
}
