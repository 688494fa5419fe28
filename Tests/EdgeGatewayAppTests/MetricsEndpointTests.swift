import EdgeConfig
import EdgeGatewayTestSupport
import EdgeReplication
import EdgeStore
import Foundation
import GatewayConfigurationFile
import Hummingbird
import HummingbirdTesting
import Logging
import Testing

@testable import EdgeGatewayApp

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite("Prometheus metrics on the ops port")
struct MetricsEndpointTests {
    @Test(
        "after a push over a real socket, both gateways' /metrics parse and show the replication",
        .enabled(if: PrometheusTextParser.isAvailable, Comment(rawValue: PrometheusTextParser.unavailableReason)))
    func metricsAfterReplication() async throws {
        try await withTemporaryGateway(
            listeners: [GatewayTOML.listener()]
        ) { hubGateway in
            try await hubGateway.test(.live) { hubClient in
                let port = try await UpstreamTests.listenerPort(hubClient)
                let before = try await Self.scrape(hubClient)
                #expect(before.value("edgegateway_listener_documents_total", ["direction": "received"]) == 0)
                #expect(before.value("edgegateway_listener_connections_total", ["listener": "lan"]) == 0)
                #expect(before.value("edgegateway_store_documents", ["database": "inventory"]) == 0)

                #expect(try Self.upgradeStatus(port: port, path: "/no-such-db/_blipsync") == 404)

                let directory = try await seededInventoryDirectory(documents: 25)
                try await withTemporaryGateway(
                    upstreams: [
                        GatewayTOML.upstream(url: "ws://127.0.0.1:\(port)/inventory", type: "push", continuous: false)
                    ],
                    dataDirectory: directory
                ) { edge in
                    try await edge.test(.live) { edgeClient in
                        try await UpstreamTests.waitFor(.upstream, in: edgeClient) {
                            $0.details["completed"] == .integer(25)
                        }
                        let edgeMetrics = try await Self.scrape(edgeClient)
                        let upstream = ["upstream": "hub", "database": "inventory"]
                        #expect(
                            edgeMetrics.value(
                                "edgegateway_upstream_documents_total", upstream.merging(["direction": "sent"]) { $1 })
                                == 25)
                        #expect(
                            edgeMetrics.value(
                                "edgegateway_upstream_documents_total",
                                upstream.merging(["direction": "received"]) { $1 })
                                == 0)
                        #expect(
                            (edgeMetrics.value(
                                "edgegateway_upstream_bytes_total", upstream.merging(["direction": "sent"]) { $1 })
                                ?? 0) >= 25 * 6)
                        #expect(
                            (edgeMetrics.value("edgegateway_upstream_last_success_timestamp_seconds", upstream) ?? 0)
                                > Date().timeIntervalSince1970 - 120)
                        #expect(edgeMetrics.value("edgegateway_upstream_retries_total", upstream) == 0)
                        let lag = try #require(
                            edgeMetrics.value(
                                "edgegateway_upstream_checkpoint_lag_sequences",
                                upstream.merging(["direction": "sent"]) { $1 }))
                        #expect(lag >= 0 && lag <= 25)
                        #expect(
                            edgeMetrics.value(
                                "edgegateway_upstream_checkpoint_lag_sequences",
                                upstream.merging(["direction": "received"]) { $1 }) == nil, "a push-only upstream")
                        let errorKinds = edgeMetrics.filter {
                            $0.name == "edgegateway_upstream_errors_total" && $0.labels["upstream"] == "hub"
                        }
                        #expect(
                            Set(errorKinds.compactMap { $0.labels["kind"] })
                                == Set(ReplicationErrorKind.allCases.map(\.rawValue)))
                        #expect(errorKinds.allSatisfy { $0.value == 0 })
                        // `protocol = "auto"` against this gateway's own listener: version vectors.
                        let protocols = edgeMetrics.filter { $0.name == "edgegateway_upstream_protocol" }
                        #expect(
                            Dictionary(uniqueKeysWithValues: protocols.map { ($0.labels["protocol"] ?? "", $0.value) })
                                == ["BLIP_3+CBMobile_4": 1, "BLIP_3+CBMobile_3": 0])
                        let activities = edgeMetrics.filter { $0.name == "edgegateway_upstream_activity" }
                        #expect(activities.count == 5)
                        #expect(activities.map(\.value).reduce(0, +) == 1)
                        #expect(edgeMetrics.value("edgegateway_store_documents", ["database": "inventory"]) == 25)
                    }
                }

                let after = try await Self.scrape(hubClient)
                let lan = ["listener": "lan", "database": "inventory"]
                #expect(
                    after.value("edgegateway_listener_documents_total", lan.merging(["direction": "received"]) { $1 })
                        == 25)
                #expect(
                    (after.value("edgegateway_listener_bytes_total", lan.merging(["direction": "received"]) { $1 }) ?? 0)
                        >= 25 * 6)
                #expect((after.value("edgegateway_listener_connections_total", lan) ?? 0) >= 1)
                #expect(after.value("edgegateway_listener_connections_open", lan) != nil)
                #expect(
                    after.value("edgegateway_listener_refused_upgrades_total", ["listener": "lan", "status": "404"])
                        == 1)
                #expect(after.value("edgegateway_listener_conflicts_total", lan) == 0)
                #expect(after.value("edgegateway_store_documents", ["database": "inventory"]) == 25)
                #expect((after.value("edgegateway_store_size_bytes", ["database": "inventory"]) ?? 0) > 0)
                let commits = try #require(
                    after.value("edgegateway_store_commit_duration_seconds_count", ["database": "inventory"]))
                #expect(commits >= 1)
                #expect(
                    after.first { $0.name == "edgegateway_store_commit_duration_seconds_count" }?.type == "histogram")
                #expect(after.value("edgegateway_build_info", ["version": EdgeGatewayVersion.current]) == 1)
                #expect((after.value("edgegateway_process_open_fds") ?? 0) > 0)
                #expect((after.value("edgegateway_process_resident_memory_bytes") ?? 0) > 1_000_000)
                let heap = try #require(after.value("edgegateway_process_heap_in_use_bytes"))
                #expect(heap > 100_000)
                let sqlite = try #require(after.value("edgegateway_store_sqlite_memory_bytes"))
                #expect(sqlite > 10_000 && sqlite < heap)
                #expect((after.value("edgegateway_process_start_time_seconds") ?? 0) > 1_600_000_000)
                #expect(after.allSatisfy { $0.name.hasPrefix("edgegateway_") })
            }
        }
    }

    @Test(
        "a pull counts blob bytes both ways, reports its checkpoint lag, and a dead upstream counts network errors",
        .enabled(if: PrometheusTextParser.isAvailable, Comment(rawValue: PrometheusTextParser.unavailableReason)))
    func pullMetrics() async throws {
        try await withTemporaryGateway(
            listeners: [GatewayTOML.listener().setting("rest_api", true)]
        ) { hubGateway in
            try await hubGateway.test(.live) { hubClient in
                let port = try await UpstreamTests.listenerPort(hubClient)
                let blob = Data((0..<150_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
                #expect(try await Self.restPut(port: port, path: "/inventory/manual/manual.pdf", body: blob) == 201)
                for index in 0..<3 {
                    #expect(
                        try await Self.restPut(port: port, path: "/inventory/doc-\(index)", body: Data("{}".utf8))
                            == 201)
                }
                try await withClosedLoopbackPort { deadPort in
                    try await withTemporaryGateway(
                        upstreams: [
                            GatewayTOML.upstream(
                                url: "ws://127.0.0.1:\(port)/inventory", type: "pull", continuous: false),
                            GatewayTOML.upstream(
                                name: "dead", url: "ws://127.0.0.1:\(deadPort)/inventory", type: "pull",
                                continuous: false),
                        ]
                    ) { edge in
                        try await edge.test(.live) { edgeClient in
                            try await UpstreamTests.waitFor(.upstream, in: edgeClient) {
                                $0.details["completed"] == .integer(4)
                            }
                            var edgeMetrics = try await Self.scrape(edgeClient)
                            let hub = ["upstream": "hub", "database": "inventory"]
                            let received = hub.merging(["direction": "received"]) { $1 }
                            #expect(edgeMetrics.value("edgegateway_upstream_documents_total", received) == 4)
                            #expect((edgeMetrics.value("edgegateway_upstream_bytes_total", received) ?? 0) >= 150_000)
                            let lag = try #require(
                                edgeMetrics.value("edgegateway_upstream_checkpoint_lag_sequences", received))
                            #expect(lag >= 0 && lag <= 4)
                            #expect(
                                edgeMetrics.value(
                                    "edgegateway_upstream_checkpoint_lag_sequences",
                                    hub.merging(["direction": "sent"]) { $1 }) == nil, "a pull-only upstream")
                            #expect(
                                edgeMetrics.value(
                                    "edgegateway_upstream_errors_total", hub.merging(["kind": "network"]) { $1 }) == 0)

                            let dead = ["upstream": "dead", "kind": "network"]
                            for _ in 0..<100
                            where (edgeMetrics.value("edgegateway_upstream_errors_total", dead) ?? 0) < 1 {
                                try await Task.sleep(for: .milliseconds(100))
                                edgeMetrics = try await Self.scrape(edgeClient)
                            }
                            #expect((edgeMetrics.value("edgegateway_upstream_errors_total", dead) ?? 0) >= 1)
                            #expect(
                                edgeMetrics.value(
                                    "edgegateway_upstream_errors_total", ["upstream": "dead", "kind": "auth"]) == 0)
                        }
                    }
                }
                let hubMetrics = try await Self.scrape(hubClient)
                let lan = ["listener": "lan", "database": "inventory", "direction": "sent"]
                #expect(hubMetrics.value("edgegateway_listener_documents_total", lan) == 4)
                #expect((hubMetrics.value("edgegateway_listener_bytes_total", lan) ?? 0) >= 150_000)
            }
        }
    }

    @Test(
        "refused credentials count as auth errors on both sides: the listener's database and the upstream",
        .enabled(if: PrometheusTextParser.isAvailable, Comment(rawValue: PrometheusTextParser.unavailableReason)))
    func authErrors() async throws {
        let usersDirectory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "edge-users-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: usersDirectory) }
        let usersFile = try StatusPageTests.writeUsersFile(in: usersDirectory)
        let passwordFile = usersDirectory.appendingPathComponent("guessed-password")
        try Data("guessed\n".utf8).write(to: passwordFile)
        try await withTemporaryGateway(
            listeners: [GatewayTOML.listener(auth: "basic", usersFile: usersFile)]
        ) { hubGateway in
            try await hubGateway.test(.live) { hubClient in
                let port = try await UpstreamTests.listenerPort(hubClient)
                let lan = ["listener": "lan", "database": "inventory", "kind": "auth"]
                #expect(try await Self.scrape(hubClient).value("edgegateway_listener_errors_total", lan) == 0)
                try await withTemporaryGateway(
                    upstreams: [
                        GatewayTOML.upstream(url: "ws://127.0.0.1:\(port)/inventory", type: "pull", continuous: false)
                            .setting("username", "mallory").setting("password_file", .string(passwordFile.path))
                    ]
                ) { edge in
                    try await edge.test(.live) { edgeClient in
                        let upstream = ["upstream": "hub", "kind": "auth"]
                        var edgeMetrics = try await Self.scrape(edgeClient)
                        for _ in 0..<100
                        where (edgeMetrics.value("edgegateway_upstream_errors_total", upstream) ?? 0) < 1 {
                            try await Task.sleep(for: .milliseconds(100))
                            edgeMetrics = try await Self.scrape(edgeClient)
                        }
                        #expect((edgeMetrics.value("edgegateway_upstream_errors_total", upstream) ?? 0) >= 1)
                        #expect(
                            edgeMetrics.value(
                                "edgegateway_upstream_errors_total", ["upstream": "hub", "kind": "network"]) == 0)
                    }
                }
                let hubMetrics = try await Self.scrape(hubClient)
                #expect((hubMetrics.value("edgegateway_listener_errors_total", lan) ?? 0) >= 1)
                #expect(
                    hubMetrics.value(
                        "edgegateway_listener_refused_upgrades_total", ["listener": "lan", "status": "401"])
                        == hubMetrics.value("edgegateway_listener_errors_total", lan))
            }
        }
    }

    /// A REST `PUT` to a listener, as curl would send it; the status.
    static func restPut(port: Int, path: String, body: Data) async throws -> Int {
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)\(path)")!)
        request.httpMethod = "PUT"
        request.httpBody = body
        request.setValue(
            path.hasSuffix(".pdf") ? "application/pdf" : "application/json", forHTTPHeaderField: "Content-Type")
        let (_, response) = try await URLSession.shared.data(for: request)
        return (response as? HTTPURLResponse)?.statusCode ?? 0
    }

    static func scrape(_ client: some TestClientProtocol) async throws -> [PrometheusTextParser.Sample] {
        try await client.execute(uri: "/metrics", method: .get) { response in
            #expect(response.status == .ok)
            #expect(response.headers[.contentType]?.hasPrefix("text/plain; version=0.0.4") == true)
            return try await PrometheusTextParser.parse(String(buffer: response.body))
        }
    }

    /// The status a listener answers a replication upgrade with, over a plain socket.
    static func upgradeStatus(port: Int, path: String) throws -> Int {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
        guard connected else { throw POSIXError(.ECONNREFUSED) }
        let request =
            "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"
            + "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
            + "Sec-WebSocket-Protocol: BLIP_3+CBMobile_3\r\n\r\n"
        _ = request.withCString { send(descriptor, $0, strlen($0), 0) }
        var buffer = [UInt8](repeating: 0, count: 512)
        let count = recv(descriptor, &buffer, buffer.count, 0)
        let head = String(decoding: buffer.prefix(max(0, count)), as: UTF8.self)
        let parts = head.split(separator: " ", maxSplits: 2)
        guard parts.count >= 2, let status = Int(parts[1]) else { throw POSIXError(.EPROTO) }
        return status
    }
}
