/// Why a listener cannot start.
public enum SyncListenerError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Client-certificate authentication happens in the TLS handshake, so it needs TLS.
    case clientCertificatesNeedTLS(listener: String)
    /// The configured interface is neither an IP address nor a network interface with an address.
    case interfaceNotFound(String)
    /// A served database is not configured.
    case unknownDatabase(listener: String, database: String)
    /// The TLS identity or trusted client roots could not be loaded.
    case tlsSetupFailed(listener: String, reason: String)
    /// The port could not be bound: another process listens on it, or it is privileged.
    case portUnavailable(listener: String, address: String, port: Int, inUse: Bool)

    public var description: String {
        switch self {
        case .clientCertificatesNeedTLS(let listener):
            "listener '\(listener)': client-certificate authentication requires TLS"
        case .interfaceNotFound(let interface):
            "no network interface or IP address '\(interface)' to bind"
        case .unknownDatabase(let listener, let database):
            "listener '\(listener)' serves database '\(database)', which is not configured"
        case .tlsSetupFailed(let listener, let reason):
            "listener '\(listener)': TLS setup failed: \(reason)"
        case .portUnavailable(let listener, let address, let port, inUse: true):
            "listener '\(listener)': port \(port) on \(address) is already in use (another gateway or program "
                + "listens there): stop it, or give this listener another port (port in its [[listener]], or "
                + "EDGE_GATEWAY_LISTENER_\(listener.uppercased().replacingOccurrences(of: "-", with: "_"))_PORT)"
        case .portUnavailable(let listener, let address, let port, inUse: false):
            "listener '\(listener)': no permission to bind port \(port) on \(address): use a port above 1023, "
                + "or grant the gateway CAP_NET_BIND_SERVICE"
        }
    }
}
