import ArgumentParser
import EdgeConfig
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix

/// Probes the ops endpoint of a running gateway. Made for Docker's HEALTHCHECK, so that the image needs no curl.
struct Health: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check a running gateway's health; exit 0 when healthy, 1 when not.",
        discussion: """
            Asks GET /health on the ops endpoint named by the configuration (or --host/--port) and prints \
            one line with the reason. A 0.0.0.0 ops address is probed on 127.0.0.1.
            """
    )

    @OptionGroup var options: ConfigurationOptions

    @Option(help: "Probe this host instead of the configured ops address.")
    var host: String?

    @Option(help: "Probe this port instead of the configured ops port.")
    var port: Int?

    @Option(help: "Seconds to wait for an answer.")
    var timeout: Int = 5

    func run() async throws {
        let target: (host: String, port: Int)
        if let host, let port {
            target = (host, port)
        } else {
            // Only the ops address is needed: the health check must work (and report) while a file that a listener or
            // upstream names is missing.
            let ops = try options.load(unusableFiles: .disableEntry).ops
            let configuredHost = ["0.0.0.0", "::", ""].contains(ops.address) ? "127.0.0.1" : ops.address
            target = (host ?? configuredHost, port ?? ops.port)
        }
        do {
            let answer = try await HealthProbe(host: target.host, port: target.port, timeout: .seconds(Int64(timeout)))
                .fetch(path: "/health")
            let summary = HealthSummary(statusCode: answer.statusCode, body: answer.body)
            print(summary.line)
            if !summary.isHealthy { throw ExitCode(1) }
        } catch let exit as ExitCode {
            throw exit
        } catch {
            print("unhealthy: \(target.host):\(target.port): \(error)")
            throw ExitCode(1)
        }
    }
}

/// Turns the /health answer into one line that says why.
struct HealthSummary {
    let isHealthy: Bool
    let line: String

    init(statusCode: Int, body: [UInt8]) {
        let report = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any]
        let status = report?["status"] as? String ?? "unknown"
        isHealthy = statusCode == 200
        let failing = (report?["components"] as? [[String: Any]] ?? [])
            .filter { ($0["status"] as? String) != "up" }
            .map { component in
                let name = "\(component["kind"] ?? "component") \(component["name"] ?? "?")"
                return "\(name): \(component["reason"] as? String ?? component["status"] as? String ?? "?")"
            }
        let prefix = isHealthy ? "healthy" : "unhealthy"
        let reasons = failing.isEmpty ? "" : "; " + failing.joined(separator: "; ")
        line = "\(prefix): HTTP \(statusCode), status \(status)\(reasons)"
    }
}

/// A minimal HTTP/1.1 GET over NIO, so that the health check pulls in no HTTP client library.
struct HealthProbe {
    struct Answer {
        var statusCode: Int
        var body: [UInt8]
    }

    struct TimedOut: Error, CustomStringConvertible {
        var description: String { "no answer in time" }
    }

    let host: String
    let port: Int
    let timeout: Duration

    func fetch(path: String) async throws -> Answer {
        try await withThrowingTaskGroup(of: Answer.self) { group in
            group.addTask { try await self.exchange(path: path) }
            group.addTask {
                try await Task.sleep(for: timeout)
                throw TimedOut()
            }
            defer { group.cancelAll() }
            return try await group.next()!
        }
    }

    private func exchange(path: String) async throws -> Answer {
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connectTimeout(.init(timeout))
            .connect(host: host, port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    return try NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>(
                        wrappingChannelSynchronously: channel
                    )
                }
            }
        return try await channel.executeThenClose { inbound, outbound in
            var headers = HTTPHeaders()
            headers.add(name: "Host", value: host)
            headers.add(name: "Connection", value: "close")
            headers.add(name: "User-Agent", value: "edge-gateway-health")
            try await outbound.write(
                .head(HTTPRequestHead(version: .http1_1, method: .GET, uri: path, headers: headers)))
            try await outbound.write(.end(nil))
            var answer = Answer(statusCode: 0, body: [])
            for try await part in inbound {
                switch part {
                case .head(let head):
                    answer.statusCode = Int(head.status.code)
                case .body(let buffer):
                    answer.body += buffer.readableBytesView
                case .end:
                    return answer
                }
            }
            return answer
        }
    }
}
