import EdgeConfig
import EdgeGatewayTestSupport
import Foundation
import GatewayConfigurationFile
import HummingbirdTesting
import Logging
import Testing

@testable import EdgeGatewayApp

@Suite("edge-gateway db export and import")
struct DatabaseCommandTests {
    @Test(
        "export writes every current revision with its history; import elsewhere stores the same bodies and revision IDs"
    )
    func roundTrip() async throws {
        let source = try temporaryDirectory()
        let copy = try temporaryDirectory()
        defer {
            try? FileManager.default.removeItem(at: source)
            try? FileManager.default.removeItem(at: copy)
        }
        for (docID, body) in [("a", #"{"qty": 1.50, "tags": ["x"]}"#), ("b", #"{"name": "two\nlines"}"#), ("c", "{}")] {
            let put = try await EdgeGatewayExecutable.run(["docs", "put", docID, body, "--data-dir", source.path])
            #expect(put.status == 0, "\(put.standardError)")
        }
        _ = try await EdgeGatewayExecutable.run([
            "docs", "put", "a", #"{"qty": 1.50, "tags": ["x", "y"]}"#, "--data-dir", source.path,
        ])
        _ = try await EdgeGatewayExecutable.run(["docs", "delete", "c", "--data-dir", source.path])

        let exported = try await EdgeGatewayExecutable.run(["db", "export", "inventory", "--data-dir", source.path])
        #expect(exported.status == 0, "\(exported.standardError)")
        let lines = exported.standardOutput.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count == 4 && lines.last == "")
        let objects = try lines.dropLast().map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        // Oldest change first: "a" was edited after "b" was written.
        #expect(objects.map { $0["_id"] as? String } == ["b", "a", "c"])
        let a = objects[1]
        #expect(a["qty"] as? Double == 1.5)
        #expect((a["_rev"] as? String)?.hasPrefix("2-") == true)
        let aHistory = try #require(a["_revisions"] as? [String: Any])
        #expect(aHistory["start"] as? Int == 2)
        #expect((aHistory["ids"] as? [String])?.count == 2)
        #expect((aHistory["ids"] as? [String])?.first.map { "2-" + $0 } == a["_rev"] as? String)
        #expect(objects[0]["name"] as? String == "two\nlines")
        #expect(objects[2]["_deleted"] as? Bool == true)
        #expect(lines[1].contains("1.50"), "numbers keep their spelling: \(lines[1])")
        #expect(exported.standardError.contains("3/3 documents exported"))

        let file = copy.appendingPathComponent("inventory.jsonl")
        try Data(exported.standardOutput.utf8).write(to: file)
        _ = try await EdgeGatewayExecutable.run(["docs", "put", "c", #"{"live": true}"#, "--data-dir", copy.path])
        let imported = try await EdgeGatewayExecutable.run([
            "db", "import", "inventory", file.path, "--data-dir", copy.path,
        ])
        #expect(imported.status == 0, "\(imported.standardError)")
        #expect(
            imported.standardOutput
                == "3 documents stored, 0 already present, 0 deletions of absent documents skipped\n")

        let fetched = try await EdgeGatewayExecutable.run(["docs", "get", "b", "--data-dir", copy.path])
        let b = try #require(
            try JSONSerialization.jsonObject(with: Data(fetched.standardOutput.utf8)) as? [String: Any])
        #expect(b["name"] as? String == "two\nlines")
        let deleted = try await EdgeGatewayExecutable.run(["docs", "get", "c", "--data-dir", copy.path])
        #expect(deleted.standardOutput.contains(#""_deleted":true"#))

        // The copy's own live "c" lost to the imported tombstone: every document now has the source's revision
        // and history, so an export of the copy lists the same metadata line for line.
        func metadata(_ export: String) throws -> [String] {
            try export.split(separator: "\n").map { line in
                var object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
                object = object.filter { $0.key.hasPrefix("_") && $0.key != "_attachments" }
                return String(
                    decoding: try JSONSerialization.data(withJSONObject: object, options: .sortedKeys), as: UTF8.self)
            }
        }
        let reexported = try await EdgeGatewayExecutable.run(["db", "export", "inventory", "--data-dir", copy.path])
        let copied = try metadata(reexported.standardOutput)
        #expect(copied.count == 3)
        #expect(Set(copied) == Set(try metadata(exported.standardOutput)))

        let again = try await EdgeGatewayExecutable.run([
            "db", "import", "inventory", file.path, "--data-dir", copy.path,
        ])
        #expect(
            again.standardOutput == "0 documents stored, 3 already present, 0 deletions of absent documents skipped\n")

        // Lines without _rev are new edits on top of what is there, as before.
        let plain = copy.appendingPathComponent("plain.jsonl")
        try Data(#"{"_id": "b", "name": "edited"}"#.utf8).write(to: plain)
        _ = try await EdgeGatewayExecutable.run(["db", "import", "inventory", plain.path, "--data-dir", copy.path])
        let edited = try await EdgeGatewayExecutable.run(["docs", "get", "b", "--data-dir", copy.path])
        #expect(edited.standardOutput.contains(#""_rev":"2-"#), "\(edited.standardOutput)")
    }

    @Test("a bad line stops the import with its line number; its batch is not stored, earlier batches are")
    func badLine() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("bad.jsonl")
        let text = """
            {"_id": "one", "n": 1}
            {"_id": "two", "n": 2}

            {"_id": "three", "n": 3}
            {"n": 4}
            {"_id": "five", "n": 5}
            """
        try Data(text.utf8).write(to: file)
        let outcome = try await EdgeGatewayExecutable.run(
            ["db", "import", "inventory", file.path, "--batch-size", "2", "--data-dir", directory.path])
        #expect(outcome.status == 1)
        #expect(outcome.standardError.contains("line 5: no string \"_id\""), "\(outcome.standardError)")
        #expect(outcome.standardError.contains("before it: 2 documents stored"))
        let listed = try await EdgeGatewayExecutable.run(["docs", "list", "--data-dir", directory.path])
        #expect(listed.standardOutput.split(separator: "\n").map { $0.split(separator: " ")[1] } == ["one", "two"])

        for (line, reason) in [
            (#"[1, 2]"#, "not a JSON object"), (#"{"_id": "x""#, "not valid JSON"),
            (#"{"_id": "_design"}"#, "invalid document ID"),
            (#"{"_id": "x", "_secret": 1}"#, "\"_secret\" is reserved"),
            (#"{"_id": "x", "_rev": "one"}"#, "\"_rev\" must be a revision ID"),
            (
                #"{"_id": "x", "_rev": "2-bb", "_revisions": {"start": 2, "ids": ["cc", "aa"]}}"#,
                "\"_rev\" 2-bb is not the newest"
            ),
            (#"{"_id": "x", "_rev": "2-bb", "_revisions": {"start": 1, "ids": ["bb", "aa"]}}"#, "\"_revisions\": "),
            (#"{"_id": "x", "_revisions": {"start": 1, "ids": ["bb"]}}"#, "\"_revisions\" without \"_rev\""),
        ] {
            try Data((#"{"_id": "ok"}"# + "\n" + line + "\n").utf8).write(to: file)
            let refused = try await EdgeGatewayExecutable.run([
                "db", "import", "inventory", file.path, "--data-dir", directory.path,
            ])
            #expect(refused.status == 1)
            #expect(refused.standardError.contains("line 2: \(reason)"), "\(refused.standardError)")
        }
        let unchanged = try await EdgeGatewayExecutable.run(["docs", "list", "--data-dir", directory.path])
        #expect(unchanged.standardOutput == listed.standardOutput)
    }

    @Test("documents imported beside a running gateway reach its continuous puller")
    func importIntoRunningGateway() async throws {
        let hubDirectory = try temporaryDirectory()
        let edgeDirectory = try temporaryDirectory()
        defer {
            try? FileManager.default.removeItem(at: hubDirectory)
            try? FileManager.default.removeItem(at: edgeDirectory)
        }
        let hub = try await buildApplication(
            configuration: try Self.configuration(
                GatewayTOML(name: "node", dataDirectory: hubDirectory.path, listeners: [GatewayTOML.listener()]),
                in: hubDirectory),
            logger: Logger(label: "hub"))
        try await hub.test(.live) { hubClient in
            let port = try await Self.listenerPort(hubClient)
            let edge = try await buildApplication(
                configuration: try Self.configuration(
                    GatewayTOML(
                        name: "node", dataDirectory: edgeDirectory.path,
                        upstreams: [GatewayTOML.upstream(url: "ws://127.0.0.1:\(port)/inventory", type: "pull")]),
                    in: edgeDirectory),
                logger: Logger(label: "edge"))
            try await edge.test(.live) { edgeClient in
                try await Self.waitUntil(edgeClient, "upstream idle") { $0.contains(#""activity":"idle""#) }

                let file = hubDirectory.appendingPathComponent("import.jsonl")
                let lines = (0..<40).map { #"{"_id": "imported-\#($0)", "n": \#($0)}"# }
                try Data(lines.joined(separator: "\n").utf8).write(to: file)
                let imported = try await EdgeGatewayExecutable.run(
                    [
                        "db", "import", "inventory", file.path, "--batch-size", "16", "--data-dir", hubDirectory.path,
                        "--config", Self.configurationFile(in: hubDirectory),
                    ])
                #expect(imported.status == 0, "\(imported.standardError)")
                #expect(imported.standardOutput.hasPrefix("40 documents stored"))

                try await Self.waitUntil(edgeClient, "40 documents pulled") { $0.contains(#""completed":40"#) }
            }
        }
    }

    /// `file`, written to `directory` too: the command line reads the same file, so that it opens the database
    /// as the gateway configured it.
    static func configuration(_ file: GatewayTOML, in directory: URL) throws -> GatewayConfiguration {
        try file.write(to: configurationFile(in: directory))
        return try file.configuration()
    }

    static func configurationFile(in directory: URL) -> String {
        directory.appendingPathComponent("gateway.toml").path
    }

    static func listenerPort(_ client: some TestClientProtocol) async throws -> Int {
        for _ in 0..<100 {
            let listeners = try await client.execute(uri: "/listeners", method: .get) { response in
                try JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [[String: Any]]
            }
            if let port = listeners?.first?["port"] as? Int { return port }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw CancellationError()
    }

    /// Polls `/upstreams` for up to 30 s.
    static func waitUntil(
        _ client: some TestClientProtocol, _ what: String, _ condition: (String) -> Bool
    ) async throws {
        var last = ""
        for _ in 0..<300 {
            last = try await client.execute(uri: "/upstreams", method: .get) { String(buffer: $0.body) }
            if condition(last) { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        Issue.record("never reached: \(what); last /upstreams: \(last)")
        throw CancellationError()
    }
}
