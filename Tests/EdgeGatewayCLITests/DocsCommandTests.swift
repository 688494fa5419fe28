import EdgeGatewayTestSupport
import Foundation
import Testing

@Suite("edge-gateway docs")
struct DocsCommandTests {
    @Test("put, replace, get, delete and list documents of the configured database")
    func lifecycle() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let target = ["--data-dir", directory.path]

        let created = try await EdgeGatewayExecutable.run(["docs", "put", "order-1", #"{"qty": 1}"#] + target)
        #expect(created.status == 0, "\(created.standardError)")
        #expect(created.standardOutput.hasPrefix("order-1 1-"))
        let replaced = try await EdgeGatewayExecutable.run(["docs", "put", "order-1", #"{"qty": 2}"#] + target)
        #expect(replaced.standardOutput.hasPrefix("order-1 2-"))

        let fetched = try await EdgeGatewayExecutable.run(["docs", "get", "order-1"] + target)
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(fetched.standardOutput.utf8)) as? [String: Any])
        #expect(object["qty"] as? Int == 2)
        #expect((object["_rev"] as? String)?.hasPrefix("2-") == true)
        #expect(object["_deleted"] == nil)

        let deleted = try await EdgeGatewayExecutable.run(["docs", "delete", "order-1"] + target)
        #expect(deleted.standardOutput.hasPrefix("order-1 3-"))
        let listed = try await EdgeGatewayExecutable.run(["docs", "list"] + target)
        #expect(listed.standardOutput.hasSuffix(" deleted\n"))
        #expect(listed.standardOutput.split(separator: "\n").count == 1)
    }

    @Test("a missing document, a non-object body and a reserved ID fail with their own message")
    func badInput() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let target = ["--data-dir", directory.path]

        let missing = try await EdgeGatewayExecutable.run(["docs", "get", "nothing"] + target)
        #expect(missing.status == 1)
        #expect(missing.standardError.contains("no document \"nothing\""))
        let array = try await EdgeGatewayExecutable.run(["docs", "put", "a", "[1]"] + target)
        #expect(array.status != 0)
        #expect(array.standardError.contains("must be a JSON object"))
        let reserved = try await EdgeGatewayExecutable.run(["docs", "put", "_a", "{}"] + target)
        #expect(reserved.status == 1)
        #expect(reserved.standardError.contains("invalid document ID '_a'"))
    }
}
