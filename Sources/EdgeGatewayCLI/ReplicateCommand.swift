import ArgumentParser
import Dispatch
import EdgeConfig
import EdgeGatewayApp
import EdgeIdentity
import EdgePairing
import EdgeReplication
import EdgeStore
import Foundation
import Logging
import SyncIdentifiers

/// Runs one replication from the command line, outside any running gateway: seeding a new site, a manual catch-up,
/// or checking that an upstream answers.
struct ReplicateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replicate",
        abstract: "Replicate a local database with an upstream once, or continuously until interrupted.",
        discussion: """
            The checkpoint is keyed by the upstream's remote UUID: the one of the configured [[upstream]] with the \
            same URL, else --remote-uuid, else one generated for this URL and kept in the database. \
            On a terminal a progress bar is drawn; otherwise a plain line is printed whenever progress changes.
            """
    )

    @OptionGroup var options: ConfigurationOptions

    @Option(name: .customLong("db"), help: "The local database; may be omitted when only one is configured.")
    var database: String?

    @Option(help: "The upstream database, ws[s]://host:port/db.")
    var url: String?

    @Option(help: "A pairing payload instead of --url: its addresses are tried in order and its certificate pinned.")
    var pairing: String?

    @Flag(help: "Only push (default: push and pull).")
    var push = false

    @Flag(help: "Only pull (default: push and pull).")
    var pull = false

    @Flag(help: "Keep replicating until interrupted (Ctrl-C).")
    var continuous = false

    @Option(
        name: .customLong("collection"),
        help: ArgumentHelp(
            "A collection to replicate, as scope.collection; repeat for several (default: the default collection).",
            discussion: "Each must be one of the local database's configured collections."))
    var collections: [String] = []

    @Option(
        name: .customLong("protocol"),
        help: ArgumentHelp(
            "Replication protocol: auto (version vectors where the server speaks them), 4 or 3.",
            discussion:
                "As the upstream's `protocol` setting: 3 for Sync Gateway 3.x, Edge Server 1.x and Couchbase Lite 3.x.")
    )
    var replicationProtocol: UpstreamProtocol = .auto

    @Option(help: "HTTP Basic user name.")
    var user: String?

    @Option(name: .customLong("password-file"), help: "File holding the Basic password.")
    var passwordFile: String?

    @Option(name: .customLong("pinned-sha256"), help: "Accept only the certificate with this SHA-256 fingerprint.")
    var pinnedSHA256: String?

    @Flag(name: .customLong("self-signed-only"), help: "Accept only a self-signed server certificate.")
    var selfSignedOnly = false

    @Option(name: .customLong("remote-uuid"), help: "The upstream's stable identity, which keys the checkpoint.")
    var remoteUUID: String?

    func validate() throws {
        guard (url == nil) != (pairing == nil) else {
            throw ValidationError("give exactly one of --url and --pairing")
        }
        if pairing != nil && (pinnedSHA256 != nil || selfSignedOnly) {
            throw ValidationError(
                "--pairing pins the certificate its payload names; drop --pinned-sha256 and --self-signed-only")
        }
        if pinnedSHA256 != nil && selfSignedOnly {
            throw ValidationError("--pinned-sha256 and --self-signed-only exclude each other")
        }
        if (user == nil) != (passwordFile == nil) {
            throw ValidationError("--user and --password-file go together")
        }
    }

    func run() async throws {
        let configuration = try options.load()
        var logger = Logger(label: "edge-gateway.replicate")
        logger.logLevel = configuration.node.logLevel
        let payload = try pairingPayload()
        let remoteURL = try payload.map { try Self.firstURL(of: $0) } ?? url ?? ""
        let settings = try configuration.databaseSettings(named: database)
        let store = try DocumentStore.forConfiguration(configuration)
        let local = try await store.openConfigured(settings)
        let replicator = ActiveReplicator(
            database: local,
            configuration: .init(
                remoteURL: remoteURL,
                endpointResolver: payload.map { ActiveReplicator.pairedEndpointResolver($0, logger: logger) },
                remoteUUID: try await checkpointIdentity(remoteURL, configuration: configuration, database: local),
                direction: push == pull ? .pushAndPull : (push ? .push : .pull),
                continuous: continuous,
                authentication: try authentication(),
                tls: payload == nil && remoteURL.lowercased().hasPrefix("wss:")
                    ? try trust().clientTLSConfiguration() : nil,
                collections: try replicatedCollections(of: settings),
                subprotocols: replicationProtocol.offer),
            logger: logger)
        let work = Task { try await replicator.run() }
        let interrupts = Self.cancelOnSignals(work)
        defer { for interrupt in interrupts { interrupt.cancel() } }
        let progress = ProgressReporter(isTerminal: isatty(STDOUT_FILENO) == 1)
        let reporting = Task {
            while !Task.isCancelled {
                await progress.show(await replicator.status())
                try? await Task.sleep(for: .milliseconds(200))
            }
        }
        let outcome = await work.result
        reporting.cancel()
        await reporting.value
        await progress.finish(await replicator.status())
        if case .failure(let error) = outcome, !(error is CancellationError) {
            printError("replication failed: \(error)")
            throw ExitCode(1)
        }
    }

    private func replicatedCollections(of settings: DatabaseSettings) throws -> [CollectionName] {
        guard !collections.isEmpty else { return [.default] }
        let configured = settings.collections
        return try collections.map { text in
            let name: CollectionName
            do {
                name = try CollectionName(parsing: text)
            } catch {
                throw ValidationError("--collection \(text): \(error)")
            }
            guard configured.contains(name) else {
                throw ValidationError(
                    "--collection \(text) is not a collection of database '\(settings.name)' "
                        + "(configured: \(configured.map(\.qualifiedName).joined(separator: ", ")))")
            }
            return name
        }
    }

    /// The payload given with --pairing; the kit looks for its gateway before each connection.
    private func pairingPayload() throws -> PairingPayload? {
        guard let pairing else { return nil }
        do {
            return try PairingPayload(decoding: pairing)
        } catch {
            throw ValidationError("not a valid pairing payload: \(error)")
        }
    }

    private static func firstURL(of payload: PairingPayload) throws -> String {
        guard let url = payload.url(forAddressAt: 0) else {
            throw ValidationError("the pairing payload's first address does not form a URL")
        }
        return url.absoluteString
    }

    private func trust() throws -> ServerTrustPolicy {
        if let pinnedSHA256 { return try .pinned(fingerprint: pinnedSHA256) }
        return selfSignedOnly ? .selfSignedOnly : .systemRoots(checkHostname: true)
    }

    private func authentication() throws -> ActiveReplicator.Authentication {
        guard let user, let passwordFile else { return .none }
        let password = try PasswordFile.read(passwordFile)
        return .basic(user: user, password: password)
    }

    /// The configured upstream's remote UUID when the URL is one of a configured upstream's, so that the CLI and
    /// the gateway share checkpoints; else --remote-uuid; else one kept for this URL.
    private func checkpointIdentity(
        _ url: String, configuration: GatewayConfiguration, database: DocumentDatabase
    ) async throws -> String {
        if let configured = configuration.upstreams.first(where: {
            $0.endpointURLs.map(\.absoluteString).contains(url)
        }) {
            return try await UpstreamRemoteUUID.resolve(for: configured, in: database)
        }
        if let remoteUUID { return remoteUUID }
        return try await UpstreamRemoteUUID.resolve(upstream: "cli:\(url)", in: database)
    }

    private static func cancelOnSignals(_ task: Task<Void, any Error>) -> [any DispatchSourceSignal] {
        [SIGINT, SIGTERM].map { signalNumber in
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber)
            source.setEventHandler { task.cancel() }
            source.resume()
            return source
        }
    }
}

/// Draws replication progress: a bar redrawn in place on a terminal, plain lines elsewhere (logs, pipes).
actor ProgressReporter {
    private let isTerminal: Bool
    private var lastLine = ""

    init(isTerminal: Bool) {
        self.isTerminal = isTerminal
    }

    func show(_ status: ActiveReplicator.Status) {
        let line = render(status)
        guard line != lastLine else { return }
        lastLine = line
        if isTerminal {
            FileHandle.standardOutput.write(Data("\r\u{1B}[2K\(line)".utf8))
        } else {
            print(line)
        }
    }

    func finish(_ status: ActiveReplicator.Status) {
        show(status)
        if isTerminal { print("") }
    }

    private func render(_ status: ActiveReplicator.Status) -> String {
        let counts = "\(status.completed)/\(status.total)"
        guard isTerminal else { return "\(status.activity.rawValue) \(counts)" }
        let bar = ProgressBar.render(fraction: status.total > 0 ? Double(status.completed) / Double(status.total) : 0)
        return "\(bar) \(counts) \(status.activity.rawValue)"
    }
}

extension UpstreamProtocol: ExpressibleByArgument {}
