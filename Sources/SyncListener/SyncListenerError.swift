/// Why a listener cannot start.
public enum SyncListenerError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Client-certificate authentication happens in the TLS handshake, so it needs TLS.
    case clientCertificatesNeedTLS(listener: String)
    /// The configured interface is neither an IP address nor a network interface with an address.
    case interfaceNotFound(String)
    /// A served database is not configured.
    case unknownDatabase(listener: String, database: String)
    /// A configured collection name is malformed.
    case invalidCollection(database: String, collection: String, reason: String)
    /// The TLS identity or trusted client roots could not be loaded.
    case tlsSetupFailed(listener: String, reason: String)

    public var description: String {
        switch self {
        case .clientCertificatesNeedTLS(let listener):
            "listener '\(listener)': client-certificate authentication requires TLS"
        case .interfaceNotFound(let interface):
            "no network interface or IP address '\(interface)' to bind"
        case .unknownDatabase(let listener, let database):
            "listener '\(listener)' serves database '\(database)', which is not configured"
        case .invalidCollection(let database, let collection, let reason):
            "database '\(database)': invalid collection '\(collection)': \(reason)"
        case .tlsSetupFailed(let listener, let reason):
            "listener '\(listener)': TLS setup failed: \(reason)"
        }
    }
}
