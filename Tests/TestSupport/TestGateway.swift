import EdgeConfig
import EdgeGatewayApp
import EdgeStore
import Foundation
import Logging
import SyncIdentifiers
import SyncListener

package struct TimedOut: Error, CustomStringConvertible {
    package var what: String

    package init(what: String) {
        self.what = what
    }

    package var description: String { "timed out waiting for \(what)" }
}

/// Polls `condition` every 5 ms for up to 30 s; the cap only matters when the condition never holds.
package func eventually(_ what: String, _ condition: () async throws -> Bool) async throws {
    for _ in 0..<6_000 {
        if try await condition() { return }
        try await Task.sleep(for: .milliseconds(5))
    }
    throw TimedOut(what: what)
}

package var testLogger: Logger {
    var logger = Logger(label: "edge-replication-test")
    logger.logLevel = .critical
    return logger
}

/// A temporary data directory with a document store and one running sync listener on 127.0.0.1.
package struct TestGateway {
    package static let databaseName = "db"

    package let store: DocumentStore
    package let listener: SyncListener
    package let port: Int
    package let dataDirectory: URL

    package var database: DocumentDatabase {
        get async throws { try await store.database(named: Self.databaseName) }
    }

    package static func settings(
        tls: ListenerTLS = .off,
        authentication: ListenerAuthentication = .none,
        deltaSync: Bool = true,
        maxConnections: Int = 16,
        maxMessageSize: Int = ListenerSettings.defaultMaxMessageSize,
        idleTimeout: Duration? = ListenerSettings.defaultIdleTimeout,
        heartbeat: Duration? = couchbaseLiteHeartbeat,
        port: Int = 0
    ) -> ListenerSettings {
        ListenerSettings(
            name: "test", interface: "127.0.0.1", port: port, tls: tls, authentication: authentication,
            databases: [databaseName], deltaSync: deltaSync, maxConnections: maxConnections, serviceDiscovery: nil,
            maxMessageSize: maxMessageSize, idleTimeout: idleTimeout, heartbeat: heartbeat)
    }

    /// Runs `body` while a listener with `settings` serves a fresh store (or the one in `dataDirectory`).
    package static func run(
        settings: ListenerSettings = settings(),
        collections: [CollectionName] = [.default],
        dataDirectory: URL? = nil,
        logger: Logger = testLogger,
        handshakeTimeout: Duration = SyncListener.Environment.defaultHandshakeTimeout,
        passwordVerificationLimit: PasswordVerificationGate.Limit = .standard,
        _ body: @Sendable (TestGateway) async throws -> Void
    ) async throws {
        let directory =
            dataDirectory
            ?? FileManager.default.temporaryDirectory.appendingPathComponent("edge-repl-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer {
            if dataDirectory == nil {
                try? FileManager.default.removeItem(at: directory)
            }
        }
        let store = try DocumentStore(dataDirectory: directory.appendingPathComponent("databases"))
        let environment = SyncListener.Environment(
            store: store, dataDirectory: directory.path, nodeName: "test-node", serverVersion: "0.0.0-test",
            handshakeTimeout: handshakeTimeout, passwordVerificationLimit: passwordVerificationLimit)
        let configuration = try SyncListener.Configuration(
            settings, databases: [DatabaseSettings(name: databaseName, collections: collections)],
            dataDirectory: directory.path)
        let listener = try SyncListener(configuration: configuration, environment: environment, logger: logger)
        try await whileRunning(listener, logger: logger) {
            guard let port = await listener.boundPort() else { throw TimedOut(what: "the listener to bind") }
            try await body(TestGateway(store: store, listener: listener, port: port, dataDirectory: directory))
        }
    }
}
