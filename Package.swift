// swift-tools-version: 6.1
import PackageDescription

// The gateway's release executable is linked by lld with packed relative relocations (DT_RELR, glibc 2.36 or
// later, as in Debian 12): the loader then reads a few kilobytes of relocations instead of megabytes, pages an
// idle gateway would otherwise keep resident (BENCHMARKS.md, listener memory).
//
// The functions that start-up and an idle gateway run are laid out together at the front of the code
// (linker/startup.order, made by scripts/linker/generate-startup-order). The kernel maps code 64 KiB at a time
// around each page first touched, so scattered, they keep most of the 31 MB of code resident.
let releaseLinkerSettings: [LinkerSetting] = [
    .unsafeFlags(
        [
            "-use-ld=lld", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs",
            "-Xlinker", "--symbol-ordering-file=\(Context.packageDirectory)/linker/startup.order",
            // Names of functions since renamed or removed are expected; they cost nothing.
            "-Xlinker", "--no-warn-symbol-ordering",
            // The toolchain's static-stdlib link exports every symbol of the executable's own objects, which
            // keeps 2.9 MB of symbol tables resident; nothing looks our symbols up at run time.
            "-Xlinker", "--no-export-dynamic",
        ],
        .when(platforms: [.linux], configuration: .release))
]

let package = Package(
    name: "EdgeGateway",
    platforms: [.macOS(.v14), .iOS(.v17)],
    products: [
        .executable(name: "edge-gateway", targets: ["EdgeGatewayCLI"]),
        .library(name: "EdgeGatewayApp", targets: ["EdgeGatewayApp"]),
        .library(name: "EdgeStore", targets: ["EdgeStore"]),
        .library(name: "BLIPCodec", targets: ["BLIPCodec"]),
        .library(name: "BLIPConnection", targets: ["BLIPConnection"]),
        .library(name: "EdgeConfig", targets: ["EdgeConfig"]),
        .library(name: "ReplicationProtocol", targets: ["ReplicationProtocol"]),
        .library(name: "SyncIdentifiers", targets: ["SyncIdentifiers"]),
        .library(name: "EdgeReplication", targets: ["EdgeReplication"]),
        .library(name: "SyncListener", targets: ["SyncListener"]),
        .library(name: "UpstreamDialer", targets: ["UpstreamDialer"]),
        .library(name: "EdgeGatewayPairingKit", targets: ["EdgeGatewayPairingKit"]),
        // Test and benchmark harness only (issue 17): a puller with Couchbase Lite 3.2.4's flow control.
        .library(name: "LiteCoreShapedPuller", targets: ["LiteCoreShapedPuller"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.80.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", "3.0.0"..<"5.0.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.6.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.5.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket.git", from: "2.2.0"),
        .package(url: "https://github.com/hummingbird-project/swift-websocket.git", from: "1.2.0"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.0.0"),
        .package(url: "https://github.com/LebJe/TOMLKit.git", from: "0.6.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.29.0"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.34.1"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.3.0"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.5.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.0.0"),
    ],
    targets: [
        // zlib, for BLIP's raw-deflate streams and CRC-32.
        .systemLibrary(
            name: "CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"])]
        ),

        // The C library's allocator, to hand freed memory back to the system.
        .systemLibrary(name: "CMalloc"),

        // libqrencode, for pairing QR codes.
        .systemLibrary(
            name: "CQREncode",
            pkgConfig: "libqrencode",
            providers: [.apt(["libqrencode-dev"])]
        ),

        // libavahi-client, for DNS-SD through the host's avahi-daemon over D-Bus.
        .systemLibrary(
            name: "CAvahi",
            pkgConfig: "avahi-client",
            providers: [.apt(["libavahi-client-dev"])]
        ),

        // DNS-SD: advertising listeners and browsing for peers, through avahi-daemon.
        .target(
            name: "EdgeDiscovery",
            dependencies: [
                "CAvahi",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),

        // This host's network interfaces and their addresses (getifaddrs), for binding and for telling peers where
        // to connect.
        .target(name: "NetworkInterfaces"),

        // The pairing payload URI (addresses, port, database, certificate digests, node): pure, no QR code, so
        // that the configuration can read `pairing = "…"` without the QR libraries.
        .target(
            name: "PairingURI",
            dependencies: ["HexEncoding", "NetworkInterfaces"]
        ),

        // Pairing payloads from TLS identities and their QR renderings: terminal, PNG, SVG.
        .target(
            name: "EdgePairing",
            dependencies: [
                "PairingURI",
                "CQREncode",
                "CZlib",
                "EdgeIdentity",
            ]
        ),

        // The device's side of pairing, for apps as for the gateway: from a scanned payload to the endpoint that
        // answered and the certificate it proved to hold, checked against the payload's digests. Also the TLS
        // certificate probe behind trust on first use. Portable: swift-nio-ssl, no platform TLS API.
        .target(
            name: "EdgeGatewayPairingKit",
            dependencies: [
                "ConnectionFailure",
                "PairingURI",
                "EdgeIdentity",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]
        ),

        // A failed TCP connection in words, for the dialer's and the pairing probe's errors.
        .target(
            name: "ConnectionFailure",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),

        // Pure, transport-free BLIP 3 framing, compression and message assembly.
        .target(
            name: "BLIPCodec",
            dependencies: ["CZlib"]
        ),

        // Completions posted from many tasks, handed to one draining task per burst.
        .target(name: "BurstQueue"),

        // BLIP connections over server- and client-side WebSockets, with flow control.
        .target(
            name: "BLIPConnection",
            dependencies: [
                "BLIPCodec",
                "BurstQueue",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
            ]
        ),

        // Bytes as hex digits and back, for every format that writes them: file names, digests, fingerprints.
        .target(name: "HexEncoding"),

        // Names the store, the replication protocol and the REST API share: collection names, blob digests and
        // revision IDs, each validated in one place by Couchbase's rules.
        .target(
            name: "SyncIdentifiers",
            dependencies: ["HexEncoding", .product(name: "Crypto", package: "swift-crypto")]
        ),

        // Pure CBMobile 3 and 4 replication vocabulary: message properties and bodies, revisions as rev-tree IDs or
        // version vectors, JSON deltas, blob references.
        .target(
            name: "ReplicationProtocol",
            dependencies: [
                "SyncJSON",
                "SyncIdentifiers",
                "VersionVectors",
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),

        // JSON for documents and the replication protocol: order-keeping values, strict parsing, compact
        // serialisation, Fleece-style deltas, and the one body scan (validity, blob digests, plainness).
        .target(name: "SyncJSON"),

        // CBMobile_4's versions: hybrid logical vectors, their wire forms and comparison, and the clock that stamps
        // this node's versions.
        .target(
            name: "VersionVectors",
            dependencies: ["SyncIdentifiers"]
        ),

        // One flush for the writes queued on an event loop together: replication sends many small messages.
        .target(
            name: "FlushCoalescing",
            dependencies: [.product(name: "NIOCore", package: "swift-nio")]
        ),

        // WebSocket pings from our side, and the close of a connection whose peer stopped answering them.
        .target(
            name: "WebSocketHeartbeat",
            dependencies: [
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
            ]
        ),

        // Client WebSocket connections to upstreams: the upgrade with our subprotocols and credentials, TLS under
        // a server trust policy (CA, self-signed-only, pinned), refusals classified as transient or permanent.
        .target(
            name: "UpstreamDialer",
            dependencies: [
                "ConnectionFailure",
                "EdgeIdentity",
                "FlushCoalescing",
                "WebSocketHeartbeat",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "WSCore", package: "swift-websocket"),
            ]
        ),

        // Replication sessions over BLIP: the passive peer that Couchbase Lite clients sync with, and the
        // active replicator that syncs with an upstream.
        .target(
            name: "EdgeReplication",
            dependencies: [
                "SyncJSON",
                "BLIPConnection",
                "BurstQueue",
                "BLIPCodec",
                "EdgeIdentity",
                "EdgeStore",
                "ReplicationProtocol",
                "SyncIdentifiers",
                "UpstreamDialer",
                "VersionVectors",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),

        // The CouchDB-style document REST API (documents, changes, bulk routes, local documents, blobs), mounted by
        // the sync listener on its port.
        .target(
            name: "DocumentRESTAPI",
            dependencies: [
                "EdgeStore",
                "ReplicationProtocol",
                "SyncIdentifiers",
                "SyncJSON",
                "VersionVectors",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            // Its OpenAPI document, served at /_openapi.json.
            resources: [.copy("Resources/openapi.json")]
        ),

        // The sync listener: HTTP/WebSocket upgrade at /<db>/_blipsync with TLS and client authentication.
        .target(
            name: "SyncListener",
            dependencies: [
                "DocumentRESTAPI",
                "SyncJSON",
                "EdgeReplication",
                "FlushCoalescing",
                "WebSocketHeartbeat",
                "EdgeCredentials",
                "EdgeIdentity",
                "EdgeStore",
                "BLIPConnection",
                "NetworkInterfaces",
                "ReplicationProtocol",
                "SyncIdentifiers",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
        ),

        // Couchbase-style document store on SQLite: revision trees, changes, local docs, blobs.
        .target(
            name: "EdgeStore",
            dependencies: [
                "HexEncoding",
                "SyncJSON",
                "SyncIdentifiers",
                "VersionVectors",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),

        // TLS identities (self-signed, generated once and persisted; or imported) and peer trust: pinning, CA, client certs.
        .target(
            name: "EdgeIdentity",
            dependencies: [
                "HexEncoding",
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),

        // Password hashing (scrypt) for listener users.
        .target(
            name: "EdgeCredentials",
            dependencies: [
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
            ]
        ),

        // TOML configuration: parsing, validation, environment and CLI overrides.
        .target(
            name: "EdgeConfig",
            dependencies: [
                "EdgeCredentials",
                "HexEncoding",
                "PairingURI",
                "SyncIdentifiers",
                .product(name: "TOMLKit", package: "TOMLKit"),
                .product(name: "Logging", package: "swift-log"),
            ],
            resources: [.copy("Resources/default.toml")]
        ),

        // The users file of `auth = "basic"` listeners: reading, validating and writing its TOML.
        .target(
            name: "ListenerUsersFile",
            dependencies: ["EdgeConfig", "EdgeCredentials"]
        ),

        // The gateway application: ops HTTP server (health), service wiring.
        .target(
            name: "EdgeGatewayApp",
            dependencies: [
                "DocumentRESTAPI", "ListenerUsersFile",
                "CMalloc",
                "EdgeConfig",
                "EdgeStore",
                "SyncListener",
                "EdgeIdentity",
                "EdgePairing",
                "EdgeReplication",
                "EdgeDiscovery",
                "EdgeGatewayPairingKit",
                "NetworkInterfaces",
                "PairingURI",
                "UpstreamDialer",
                "ReplicationProtocol",
                "SyncIdentifiers",
                "VersionVectors",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ]
        ),

        .executableTarget(
            name: "EdgeGatewayCLI",
            dependencies: [
                "ListenerUsersFile",
                "EdgeGatewayApp",
                "EdgeDiscovery",
                "EdgePairing",
                "EdgeIdentity",
                "EdgeCredentials",
                "EdgeConfig",
                "EdgeReplication",
                "EdgeStore",
                "EdgeGatewayPairingKit",
                "NetworkInterfaces",
                "SyncIdentifiers",
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            linkerSettings: releaseLinkerSettings
        ),

        // A child process that writes to the store until it is killed; kill-safety tests drive it.
        .executableTarget(
            name: "StoreCrashProbe",
            dependencies: ["EdgeStore", "SyncIdentifiers"]
        ),

        // The gateway configuration file the tests write, built from the sections they care about; scripts get the
        // same files through `GatewayConfigWriter`.
        .target(
            name: "GatewayConfigurationFile",
            path: "Tests/GatewayConfigurationFile"
        ),
        .executableTarget(
            name: "GatewayConfigWriter",
            dependencies: [
                "GatewayConfigurationFile",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Tests/GatewayConfigWriter"
        ),

        // The gateway `serve` runs, in a process valgrind can follow, for the instruction-count guard
        // (scripts/perf/instructions).
        .executableTarget(
            name: "CountedGateway",
            dependencies: [
                "EdgeConfig",
                "EdgeGatewayApp",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/CountedGateway"
        ),

        // A lossy, slow, reordering link between two network interfaces in user space, for the bad-network
        // reliability tests on kernels without sch_netem.
        .executableTarget(
            name: "LinkEmulator",
            path: "Tests/LinkEmulator"
        ),

        // Many lean continuous BLIP clients without a store, in a process apart from the gateway, for the load runs
        // of the reliability suite.
        .executableTarget(
            name: "LoadGenerator",
            dependencies: [
                "BLIPCodec",
                "EdgeGatewayTestSupport",
                "ReplicationProtocol",
                "SyncIdentifiers",
                "SyncJSON",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
            ],
            path: "Tests/LoadGenerator"
        ),

        // Helpers shared by several test targets: an independent QR reader and loopback ports.
        .target(
            name: "EdgeGatewayTestSupport",
            dependencies: [
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                "GatewayConfigurationFile", "EdgeGatewayApp", "ListenerUsersFile",
                "EdgeReplication",
                "UpstreamDialer",
                "EdgeIdentity",
                "EdgeCredentials",
                "SyncListener",
                "SyncJSON",
                "SyncIdentifiers",
                "ReplicationProtocol",
                "EdgeStore",
                "EdgeConfig",
                "BLIPConnection",
                "BLIPCodec",
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
                .product(name: "Hummingbird", package: "hummingbird"),
            ],
            path: "Tests/TestSupport"
        ),

        // Upstreams that tests put in place of Couchbase's: a LiteCore-strict front door for a real listener, and
        // a server that answers one upgrade as scripted.
        .target(
            name: "UpstreamStandIns",
            dependencies: [
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            path: "Tests/UpstreamStandIns"
        ),

        // A puller that behaves as Couchbase Lite 3.2.4's, for tests and the Benchmarks package (issue 17).
        .target(
            name: "LiteCoreShapedPuller",
            dependencies: [
                "SyncJSON",
                "BLIPCodec",
                "BLIPConnection",
                "EdgeStore",
                "ReplicationProtocol",
                "SyncIdentifiers",
                "UpstreamDialer",
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/LiteCoreShapedPuller"
        ),

        .testTarget(
            name: "FlushCoalescingTests",
            dependencies: [
                "FlushCoalescing",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
            ]
        ),
        .testTarget(
            name: "DocumentRESTAPITests",
            dependencies: [
                "SyncListener",
                "SyncJSON",
                "SyncIdentifiers",
                "ReplicationProtocol",
                "EdgeStore",
                "EdgeReplication",
                "EdgeConfig",
                "EdgeGatewayTestSupport",
                "VersionVectors",
            ],
        ),
        .testTarget(
            name: "SyncListenerTests",
            dependencies: [
                .product(name: "X509", package: "swift-certificates"), "UpstreamDialer", "SyncJSON",
                "ReplicationProtocol", .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"), .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"), "EdgeIdentity",
                "EdgeGatewayTestSupport", "EdgeCredentials", "EdgeConfig",
                .product(name: "Crypto", package: "swift-crypto"), "BLIPConnection", "BLIPCodec",
                "SyncListener", "SyncIdentifiers",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycleTestKit", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
        .testTarget(
            name: "WebSocketHeartbeatTests",
            dependencies: [
                "WebSocketHeartbeat",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
            ]
        ),
        .testTarget(
            name: "BLIPCodecTests",
            dependencies: ["EdgeGatewayTestSupport", "BLIPCodec", "HexEncoding"],
            resources: [.copy("Fixtures")]
        ),
        .testTarget(
            name: "BLIPConnectionTests",
            dependencies: [
                "EdgeGatewayTestSupport",
                "BLIPConnection",
                "BLIPCodec",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
            ]
        ),
        .testTarget(
            name: "ReplicationProtocolTests",
            dependencies: ["SyncJSON", "EdgeGatewayTestSupport", "ReplicationProtocol", "SyncIdentifiers"]
        ),
        .testTarget(
            name: "HexEncodingTests",
            dependencies: ["HexEncoding"]
        ),
        .testTarget(
            name: "VersionVectorsTests",
            dependencies: ["VersionVectors", "SyncIdentifiers"]
        ),
        .testTarget(
            name: "SyncIdentifiersTests",
            dependencies: ["SyncIdentifiers"]
        ),
        .testTarget(
            name: "SyncJSONTests",
            dependencies: ["SyncJSON", "EdgeGatewayTestSupport"]
        ),
        .testTarget(
            name: "BurstQueueTests",
            dependencies: ["BurstQueue"]
        ),
        .testTarget(
            name: "EdgeReplicationTests",
            dependencies: [
                "SyncJSON",
                "EdgeReplication",
                "CMalloc",
                "UpstreamStandIns",
                "UpstreamDialer",
                "EdgeGatewayTestSupport",
                "EdgeStore",
                "EdgeConfig",
                "EdgeIdentity",
                "BLIPConnection",
                "BLIPCodec",
                "ReplicationProtocol",
                "SyncIdentifiers",
                "VersionVectors",
                "LiteCoreShapedPuller",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "NetworkInterfacesTests",
            dependencies: ["NetworkInterfaces"]
        ),
        .testTarget(
            name: "EdgePairingTests",
            dependencies: ["EdgePairing", "EdgeGatewayTestSupport"]
        ),
        .testTarget(
            name: "EdgeStoreTests",
            dependencies: [
                "EdgeStore", "StoreCrashProbe", "EdgeGatewayTestSupport", "SyncIdentifiers", "VersionVectors",
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            resources: [.copy("Fixtures")]
        ),
        .testTarget(
            name: "EdgeIdentityTests",
            dependencies: [
                "EdgeIdentity",
                "EdgeGatewayTestSupport",
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "X509", package: "swift-certificates"),
            ]
        ),
        .testTarget(
            name: "EdgeCredentialsTests",
            dependencies: ["EdgeCredentials"]
        ),
        .testTarget(
            name: "EdgeConfigTests",
            dependencies: [
                "EdgeGatewayTestSupport",
                "EdgeConfig",
                .product(name: "Logging", package: "swift-log"),
            ],
        ),
        .testTarget(
            name: "ListenerUsersFileTests",
            dependencies: ["ListenerUsersFile", "EdgeConfig", "EdgeCredentials", "EdgeGatewayTestSupport"]
        ),
        .testTarget(
            name: "EdgeGatewayCLITests",
            dependencies: [
                "GatewayConfigurationFile",
                "EdgeGatewayCLI", "EdgeGatewayTestSupport", "UpstreamStandIns", "EdgeIdentity",
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                // In-process gateways beside the binary: `db import` into a running gateway's data directory.
                "EdgeGatewayApp", "EdgeConfig",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "EdgeDiscoveryTests",
            dependencies: [
                "GatewayConfigurationFile", "EdgeDiscovery", "EdgeGatewayCLI", "EdgePairing", "EdgeGatewayTestSupport",
            ]
        ),
        .testTarget(
            name: "EdgeGatewayPairingKitTests",
            dependencies: [
                "GatewayConfigurationFile", "ListenerUsersFile",
                "EdgeGatewayPairingKit",
                "EdgeGatewayApp",
                "EdgeGatewayTestSupport",
                "EdgeConfig",
                "EdgeCredentials",
                "EdgeIdentity",
                "EdgePairing",
                "EdgeReplication",
                "EdgeStore",
                "UpstreamDialer",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Faults and load end to end against the real binary: SIGKILL mid-sync, disk full, restart, load.
        .testTarget(
            name: "ReliabilityTests",
            dependencies: [
                "VersionVectors",
                "GatewayConfigurationFile",
                "EdgeGatewayApp",
                "EdgeGatewayCLI",
                "LinkEmulator",
                "LoadGenerator",
                "EdgeGatewayTestSupport",
                "EdgeReplication",
                "EdgeStore",
                "ReplicationProtocol",
                "SyncIdentifiers",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "EdgeGatewayAppTests",
            dependencies: [
                "GatewayConfigurationFile", "ListenerUsersFile",
                "EdgeGatewayApp",
                "EdgeCredentials",
                "EdgeReplication",
                "UpstreamDialer",
                "EdgePairing",
                "EdgeStore",
                "EdgeGatewayTestSupport",
                "UpstreamStandIns",
                "EdgeIdentity",
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                "EdgeConfig",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
            ]
        ),
    ]
)
