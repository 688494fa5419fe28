import EdgeConfig
import EdgeGatewayTestSupport
import EdgeStore
import Foundation
import GatewayConfigurationFile
import Hummingbird
import HummingbirdTesting
import Logging
import Testing

@testable import EdgeGatewayApp

@Suite("Upstreams in the running gateway")
struct UpstreamTests {
    @Test("a gateway pushes to another gateway's listener at start and reports the upstream on /health")
    func gatewayToGateway() async throws {
        try await withTemporaryGateway(
            listeners: [GatewayTOML.listener()]
        ) { upstreamGateway in
            try await upstreamGateway.test(.live) { upstreamClient in
                let port = try await Self.listenerPort(upstreamClient)

                let directory = try await seededInventoryDirectory(documents: 25)
                try await withTemporaryGateway(
                    upstreams: [
                        GatewayTOML.upstream(url: "ws://127.0.0.1:\(port)/inventory", type: "push", continuous: false)
                    ],
                    dataDirectory: directory
                ) { edge in
                    try await edge.test(.live) { edgeClient in
                        var upstream: ComponentHealth?
                        var store: ComponentHealth?
                        for _ in 0..<300 {
                            upstream = try await Self.component(.upstream, from: edgeClient)
                            store = try await Self.component(.store, from: upstreamClient)
                            if upstream?.details["completed"] == .integer(25),
                                store?.details["lastSequence"] == .integer(25)
                            {
                                break
                            }
                            try await Task.sleep(for: .milliseconds(100))
                        }
                        let hub = try #require(upstream)
                        #expect(hub.name == "hub")
                        #expect(hub.status == .up)
                        #expect(hub.details["completed"] == .integer(25))
                        #expect(hub.details["lastSuccess"] != HealthValue.none)
                        #expect(store?.details["lastSequence"] == .integer(25))
                    }
                }
            }
        }
    }

    @Test("an unreachable upstream is retried and shows as degraded, not as a crash")
    func unreachableUpstream() async throws {
        let port = try freeLoopbackPort()
        try await withTemporaryGateway(
            upstreams: [GatewayTOML.upstream(url: "ws://127.0.0.1:\(port)/inventory", type: "pull")]
        ) { application in
            try await application.test(.live) { client in
                var upstream: ComponentHealth?
                for _ in 0..<50 {
                    upstream = try await Self.component(.upstream, from: client)
                    if upstream?.status == .degraded { break }
                    try await Task.sleep(for: .milliseconds(100))
                }
                let hub = try #require(upstream)
                #expect(hub.status == .degraded)
                #expect(hub.reason?.hasPrefix("retrying after attempt ") == true, "\(hub.reason ?? "no reason")")
                #expect(hub.details["activity"] == "offline")
                try await client.execute(uri: "/health", method: .get) { response in
                    #expect(response.status == .ok)
                }
            }
        }
    }

    @Test("an upstream that is down at start is retried until it comes up, then syncs")
    func downAtStartThenUp() async throws {
        // Held until the hub starts: a port that was only free once went to another test's listener meanwhile,
        // whose 401 stopped this upstream for good.
        let reserved = try ReservedLoopbackPort()
        let port = reserved.port
        try await withTemporaryGateway(
            upstreams: [
                GatewayTOML.upstream(url: "ws://127.0.0.1:\(port)/inventory", type: "pull").setting(
                    "max_attempt_wait", "1s")
            ]
        ) { edge in
            try await edge.test(.live) { edgeClient in
                try await Self.waitFor(.upstream, in: edgeClient) { $0.status == .degraded }
                reserved.release()
                try await withTemporaryGateway(
                    listeners: [GatewayTOML.listener(port: port)]
                ) { hub in
                    try await hub.test(.live) { _ in
                        let upstream = try await Self.waitFor(.upstream, in: edgeClient) {
                            $0.status == .up && $0.details["activity"] == "idle"
                        }
                        #expect(upstream.reason == nil)
                        #expect(upstream.details["lastSuccess"] != HealthValue.none)
                    }
                }
            }
        }
    }

    /// Polls /health for up to 20 s until the first component of `kind` satisfies `condition`.
    @discardableResult
    static func waitFor(
        _ kind: ComponentHealth.Kind, in client: some TestClientProtocol,
        _ condition: (ComponentHealth) -> Bool
    ) async throws -> ComponentHealth {
        var last: ComponentHealth?
        for _ in 0..<200 {
            last = try await component(kind, from: client)
            if let last, condition(last) { return last }
            try await Task.sleep(for: .milliseconds(100))
        }
        Issue.record("\(kind) never reached the expected state; last: \(String(describing: last))")
        throw CancellationError()
    }

    static func component(_ kind: ComponentHealth.Kind, from client: some TestClientProtocol) async throws
        -> ComponentHealth?
    {
        try await client.execute(uri: "/health", method: .get) { response in
            let report = try JSONDecoder().decode(HealthMonitor.Report.self, from: Data(buffer: response.body))
            return report.components.first { $0.kind == kind }
        }
    }

    static func listenerPort(_ client: some TestClientProtocol) async throws -> Int {
        for _ in 0..<50 {
            if let listener = try await component(.listener, from: client),
                case .integer(let port) = listener.details["port"]
            {
                return port
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw CancellationError()
    }
}
