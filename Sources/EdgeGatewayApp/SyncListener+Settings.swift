import DocumentRESTAPI
import EdgeConfig
import EdgeIdentity
import ListenerUsersFile
import SyncListener

extension SyncListener.Configuration {
    /// The listener a `[[listener]]` entry describes, serving those of `databases` the entry names. Files the
    /// entry names (users, certificates) are read by the listener, through the loaders made here.
    public init(
        _ settings: ListenerSettings, databases: [DatabaseSettings], dataDirectory: String
    ) throws(SyncListenerError) {
        var served: [SyncListener.ServedDatabase] = []
        for name in settings.databases {
            guard let database = databases.first(where: { $0.name == name }) else {
                throw .unknownDatabase(listener: settings.name, database: name)
            }
            served.append(SyncListener.ServedDatabase(name: name, collections: database.collections))
        }
        self.init(
            name: settings.name, interface: settings.interface, port: settings.port,
            tls: SyncListener.TLS(settings.tls),
            authentication: SyncListener.Authentication(settings.authentication, dataDirectory: dataDirectory),
            databases: served, deltaSync: settings.deltaSync, maxConnections: settings.maxConnections,
            maxMessageSize: settings.maxMessageSize, idleTimeout: settings.idleTimeout, heartbeat: settings.heartbeat,
            restAPI: DocumentRESTAPI.Configuration(settings.restAPI, maxBodySize: settings.restMaxBodySize))
    }
}

extension SyncListener.TLS {
    init(_ tls: ListenerTLS) {
        switch tls {
        case .off:
            self = .off
        case .selfSigned:
            self = .selfSigned
        case .pemFiles(let certificate, let privateKey):
            self = .files([certificate, privateKey]) {
                try TLSIdentity.load(certificatePEMFile: certificate, keyPEMFile: privateKey)
            }
        case .pkcs12File(let path, let password):
            self = .files([path]) { try TLSIdentity.load(pkcs12File: path, password: password?.value ?? "") }
        }
    }
}

extension SyncListener.Authentication {
    init(_ authentication: ListenerAuthentication, dataDirectory: String) {
        switch authentication {
        case .none:
            self = .none
        case .basic(let usersFile):
            self = .basic(usersFile: usersFile) {
                try UsersFile.readForListener(path: usersFile, dataDirectory: dataDirectory)
            }
        case .clientCertificate(let authorities):
            self = .clientCertificate(trustedCertificateAuthorities: authorities)
        }
    }
}

extension DocumentRESTAPI.Configuration {
    /// nil where `rest_api = false`.
    init?(_ access: RESTAPIAccess, maxBodySize: Int) {
        switch access {
        case .off: return nil
        case .readOnly: self.init(access: .readOnly, maxBodySize: maxBodySize)
        case .readWrite: self.init(access: .readWrite, maxBodySize: maxBodySize)
        }
    }
}
