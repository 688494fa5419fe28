import EdgeConfig
import EdgeCredentials
import EdgeGatewayApp
import EdgeGatewayPairingKit
import EdgeGatewayTestSupport
import EdgeIdentity
import EdgePairing
import EdgeReplication
import EdgeStore
import Foundation
import GatewayConfigurationFile
import Hummingbird
import HummingbirdTesting
import ListenerUsersFile
import Logging

var testLogger: Logger {
    var logger = Logger(label: "pairing-kit-test")
    logger.logLevel = .critical
    return logger
}

struct TimedOut: Error, CustomStringConvertible {
    let description: String
}

/// A gateway run in-process, as `serve` runs it: one self-signed TLS listener on loopback that checks Basic
/// credentials, serving `inventory`. The listener keeps its port and identity across runs, so a certificate can
/// be rotated between two of them.
struct PairingGateway {
    static let nodeName = "pairing-kit-test"
    static let user = "scanner"
    static let password = "device-secret"

    let directory: URL
    let listenerPort: Int

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("edge-kit-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        // Quick scrypt parameters: the hash is checked on every connection of these tests.
        let hash = try PasswordHash.make(
            password: Self.password, parameters: .init(logRounds: 4, blockSize: 8, parallelism: 1))
        try UsersFile.write(
            [ListenerUser(name: Self.user, passwordHash: hash)], to: directory.appendingPathComponent("users.toml").path
        )
        listenerPort = try freeLoopbackPort()
    }

    func remove() {
        try? FileManager.default.removeItem(at: directory)
    }

    var identityDirectory: String {
        directory.appendingPathComponent("data/identity").path
    }

    func configuration() throws -> GatewayConfiguration {
        try GatewayTOML(
            name: Self.nodeName, dataDirectory: directory.appendingPathComponent("data").path,
            listeners: [
                GatewayTOML.listener(
                    port: listenerPort, tls: "self-signed", auth: "basic",
                    usersFile: directory.appendingPathComponent("users.toml").path)
            ]
        ).configuration()
    }

    /// Runs the gateway while `body` runs; `body` is given the pairing payload the gateway publishes.
    func run<Value: Sendable>(_ body: @Sendable (String) async throws -> Value) async throws -> Value {
        let application = try await buildApplication(configuration: try configuration(), logger: testLogger)
        return try await application.test(.live) { client in
            let entries = try await client.execute(uri: "/pairing", method: .get) { response in
                try JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [[String: String]]
            }
            guard let payload = entries?.first?["payload"] else {
                throw TimedOut(description: "the gateway published no pairing payload: \(String(describing: entries))")
            }
            return try await body(payload)
        }
    }

    /// What `edge-gateway cert rotate` does: a new self-signed certificate, served from the next start.
    func rotateCertificate() throws -> TLSIdentity {
        try TLSIdentity.rotateSelfSigned(directory: identityDirectory, commonName: Self.nodeName, logger: testLogger)
    }

    func currentIdentity() throws -> TLSIdentity {
        try TLSIdentity.loadOrCreateSelfSigned(
            directory: identityDirectory, commonName: Self.nodeName, logger: testLogger)
    }
}

/// What a phone's camera does with the code `edge-gateway pair` prints on a terminal: the rendering is turned
/// back into pixels as a dark-background terminal shows it, and zxing-cpp reads them.
enum Camera {
    static func scanTerminalCode(encoding payload: String) async throws -> String {
        let rendering = try QRCode(encoding: payload).terminalRendering()
        let bitmap = try TerminalBitmap(rendering: rendering)
        let png = try QRCode.png(size: bitmap.width, quietZone: 0, scale: 4) { row, column in
            bitmap.isDark(row: row, column: column)
        }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("scan-\(UUID().uuidString).png")
        defer { try? FileManager.default.removeItem(at: file) }
        try Data(png).write(to: file)
        return try await ZXingReader.decode(imageAt: file.path)
    }
}

/// A device's local database, replicating with a paired gateway as the project's own active peer, configured
/// with nothing but what the kit returned and the user's credentials.
struct Device {
    let store: DocumentStore
    let database: DocumentDatabase
    let directory: URL

    static func run(_ body: (Device) async throws -> Void) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "edge-device-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try DocumentStore(dataDirectory: directory)
        try await body(Device(store: store, database: try await store.database(named: "local"), directory: directory))
    }

    func replicator(for gateway: PairedGateway) throws -> ActiveReplicator {
        try replicator(endpoint: gateway.endpoint, pinnedCertificateDER: gateway.certificateDER)
    }

    /// Push and pull with the endpoint, trusting only the certificate `pinnedCertificateDER`.
    func replicator(endpoint: URL, pinnedCertificateDER: [UInt8], continuous: Bool = false) throws
        -> ActiveReplicator
    {
        ActiveReplicator(
            database: database,
            configuration: .init(
                remoteURL: endpoint.absoluteString,
                remoteUUID: "paired-gateway",
                direction: .pushAndPull,
                continuous: continuous,
                authentication: .basic(user: PairingGateway.user, password: PairingGateway.password),
                tls: try ServerTrustPolicy.pinned(certificateDER: pinnedCertificateDER).clientTLSConfiguration()),
            logger: testLogger)
    }

    func save(_ docID: String) async throws {
        try await database.save(docID, body: Data(#"{"from":"\#(docID)"}"#.utf8), parentRevID: nil)
    }

    func has(_ docID: String) async throws -> Bool {
        try await database.document(docID) != nil
    }
}

/// A second gateway run in-process whose one `[[upstream]]` is given by a pairing payload, pushing `inventory`
/// continuously with the paired gateway's Basic credentials.
struct PairedUpstreamGateway {
    let directory: URL

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("edge-kit-b-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        guard
            FileManager.default.createFile(
                atPath: directory.appendingPathComponent("password").path,
                contents: Data(PairingGateway.password.utf8), attributes: [.posixPermissions: 0o600])
        else {
            throw TimedOut(description: "cannot write the password file in \(directory.path)")
        }
    }

    func remove() {
        try? FileManager.default.removeItem(at: directory)
    }

    func configuration(pairing: String) throws -> GatewayConfiguration {
        try GatewayTOML(
            name: "upstream-b", dataDirectory: directory.appendingPathComponent("data").path,
            upstreams: [
                GatewayTOML.upstream(name: "paired", pairing: pairing, type: "push").setting("max_attempt_wait", "1s")
                    .setting("username", .string(PairingGateway.user)).setting(
                        "password_file", .string(directory.appendingPathComponent("password").path))
            ]
        ).configuration()
    }

    /// Saves `docID` in the gateway's `inventory` before it starts, as `edge-gateway docs put` would.
    func seed(_ docID: String, pairing: String) async throws {
        let configuration = try configuration(pairing: pairing)
        let store = try DocumentStore.forConfiguration(configuration)
        let database = try await store.openConfigured(configuration.databases[0])
        try await database.save(docID, body: Data(#"{"from":"b"}"#.utf8), parentRevID: nil)
    }

    /// Runs the gateway while `body` runs; `body` can read its ops endpoint.
    func run(pairing: String, _ body: @Sendable (any TestClientProtocol) async throws -> Void) async throws {
        let application = try await buildApplication(
            configuration: try configuration(pairing: pairing), logger: testLogger)
        try await application.test(.live) { client in try await body(client) }
    }

    /// `GET /health` as text.
    static func health(_ client: any TestClientProtocol) async throws -> String {
        try await client.execute(uri: "/health", method: .get) { response in String(buffer: response.body) }
    }
}
