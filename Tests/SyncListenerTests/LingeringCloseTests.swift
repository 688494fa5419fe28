import EdgeGatewayTestSupport
import Foundation
import Testing

/// A refused request is answered even to a client that writes its whole request before it reads: the listener
/// drains what is still coming instead of closing with it unread, which would reset the connection under the answer.
@Suite("Lingering close: a refused request's answer reaches a client that is still writing")
struct LingeringCloseTests {
    /// Python's `http.client` sends the whole request, then reads the response.
    static let program = """
        import http.client, sys
        connection = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]), timeout=20)
        try:
            connection.request("GET", sys.argv[2], headers={"X-Filler": "a" * int(sys.argv[3])})
            response = connection.getresponse()
            print(response.status, response.getheader("Connection"))
        except Exception as error:
            print("failed", type(error).__name__, error)
        """

    @Test(
        "a header field of 1 MiB or 16 MiB sent whole by http.client: 431 with Connection: close, not a reset",
        arguments: [1 << 20, 16 << 20])
    func headerOverflow(size: Int) async throws {
        let python = try await runExternalTool("python3", ["-c", "import http.client"])
        try #require(python.status == 0, "needs python3")
        try await TestGateway.run { gateway in
            for path in ["/", "/db/_blipsync"] {
                let outcome = try await runExternalTool(
                    "python3", ["-c", Self.program, String(gateway.port), path, String(size)])
                #expect(
                    outcome.output.trimmingCharacters(in: .whitespacesAndNewlines) == "431 close", "\(path): \(outcome)"
                )
            }
            // The listener is still serving.
            let reply = try await RESTClient(port: gateway.port).get("/")
            #expect(reply.status == 200)
        }
    }
}
