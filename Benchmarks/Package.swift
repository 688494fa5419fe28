// swift-tools-version: 6.1
// Benchmarks live in their own package so the main build and CI never compile the harness.
// Run: cd Benchmarks && swift package --disable-sandbox benchmark
import Foundation
import PackageDescription

// A path dependency is identified by its folder name, which depends on where the repository was cloned.
let rootPackage = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .lastPathComponent.lowercased()

let package = Package(
    name: "EdgeGatewayBenchmarks",
    platforms: [.macOS(.v14)],
    dependencies: [
        .package(path: ".."),
        .package(url: "https://github.com/ordo-one/benchmark.git", from: "1.38.0", traits: ["MallocInterposer"]),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.0.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.6.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.5.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket.git", from: "2.2.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.6.0"),
    ],
    targets: [
        .executableTarget(
            name: "StoreBenchmarks",
            dependencies: [
                .product(name: "EdgeStore", package: rootPackage),
                .product(name: "SyncIdentifiers", package: rootPackage),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "StoreBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "BLIPBenchmarks",
            dependencies: [
                .product(name: "BLIPCodec", package: rootPackage),
                .product(name: "BLIPConnection", package: rootPackage),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "BLIPBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "ReplicationBenchmarks",
            dependencies: [
                .product(name: "EdgeGatewayApp", package: rootPackage),
                .product(name: "EdgeReplication", package: rootPackage),
                .product(name: "EdgeStore", package: rootPackage),
                .product(name: "EdgeConfig", package: rootPackage),
                .product(name: "SyncListener", package: rootPackage),
                .product(name: "LiteCoreShapedPuller", package: rootPackage),
                .product(name: "ReplicationProtocol", package: rootPackage),
                .product(name: "SyncIdentifiers", package: rootPackage),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "ReplicationBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        // The listener alone in a child process of ReplicationBenchmarks, whose CPU time and peak memory are then
        // the gateway's own. Build it before running that benchmark (BENCHMARKS.md).
        .executableTarget(
            name: "GatewayChild",
            dependencies: [
                .product(name: "EdgeGatewayApp", package: rootPackage),
                .product(name: "EdgeConfig", package: rootPackage),
                .product(name: "EdgeStore", package: rootPackage),
                .product(name: "SyncListener", package: rootPackage),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "GatewayChild"
        ),
        // Not a harness benchmark: times `/metrics` scrapes of an in-process gateway holding open connections.
        // Run it directly (BENCHMARKS.md).
        .executableTarget(
            name: "MetricsScrapeBenchmark",
            dependencies: [
                .product(name: "EdgeGatewayApp", package: rootPackage),
                .product(name: "EdgeConfig", package: rootPackage),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "MetricsScrapeBenchmark"
        ),
        // Not a harness benchmark: it measures another process's resident memory. Run it directly.
        .executableTarget(
            name: "ListenerMemory",
            dependencies: [
                .product(name: "EdgeGatewayApp", package: rootPackage),
                .product(name: "BLIPCodec", package: rootPackage),
                .product(name: "BLIPConnection", package: rootPackage),
                .product(name: "EdgeConfig", package: rootPackage),
                .product(name: "EdgeStore", package: rootPackage),
                .product(name: "ReplicationProtocol", package: rootPackage),
                .product(name: "SyncListener", package: rootPackage),
                .product(name: "UpstreamDialer", package: rootPackage),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "ListenerMemory",
            // Linked as the gateway's release binary is (see the root Package.swift), so the figures are the
            // product's.
            linkerSettings: [
                .unsafeFlags(
                    ["-use-ld=lld", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs"],
                    .when(platforms: [.linux], configuration: .release))
            ]
        ),
    ]
)
