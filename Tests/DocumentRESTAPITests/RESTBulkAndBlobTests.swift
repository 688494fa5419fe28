import EdgeConfig
import EdgeGatewayTestSupport
import EdgeStore
import Foundation
import ReplicationProtocol
import SyncIdentifiers
import SyncJSON
import Testing

@testable import EdgeReplication
@testable import SyncListener

@Suite("REST bulk routes")
struct RESTBulkTests {
    @Test("_bulk_docs writes each document and reports conflicts per document; a bad entry writes nothing")
    func bulkDocs() async throws {
        try await RESTAPITests.withAuthenticatedGateway { gateway, client in
            let existing = try await gateway.database.save("b", body: Data("{}".utf8), parentRevID: nil)
            let reply = try await client.send(
                "POST", "/db/_bulk_docs",
                json: ["docs": [["_id": "a", "n": 1], ["_id": "b", "n": 2], ["n": 3]]])
            #expect(reply.status == 201, "\(reply.text)")
            let results = try #require(reply.json?.arrayValue)
            #expect(results.count == 3)
            #expect(results[0].objectValue?["rev"]?.stringValue?.hasPrefix("1-") == true)
            #expect(results[1].objectValue?["error"] == "conflict")
            #expect(results[1].objectValue?["status"] == 409)
            let generated = try #require(results[2].objectValue?["id"]?.stringValue)
            #expect(try await gateway.database.document(generated) != nil)
            #expect(try await gateway.database.document("b")?.revID == existing.revID)

            let sequence = try await gateway.database.lastSequence()
            let bad = try await client.send(
                "POST", "/db/_bulk_docs", json: ["docs": [["_id": "c"], ["_id": "d", "_rev": "nonsense"]]])
            #expect(bad.status == 400)
            #expect(bad.error.reason?.contains("docs[1]") == true)
            #expect(try await gateway.database.lastSequence() == sequence)
            #expect(try await client.send("POST", "/db/_bulk_docs", json: ["nodocs": true]).status == 400)
        }
    }

    @Test("new_edits=false keeps each _rev and _revisions history; conflicts become branches; bad entries fail alone")
    func bulkDocsKeepingRevisions() async throws {
        try await RESTAPITests.withAuthenticatedGateway { gateway, client in
            let reply = try await client.send(
                "POST", "/db/_bulk_docs",
                json: [
                    "new_edits": false,
                    "docs": [
                        ["_id": "r", "_rev": "3-cc", "_revisions": ["start": 3, "ids": ["cc", "bb", "aa"]], "v": 3],
                        ["_id": "r", "_revisions": ["start": 2, "ids": ["dd", "aa"]], "v": 2],
                        ["_id": "no-rev", "v": 0],
                        ["_rev": "1-ee", "v": 0],
                        ["_id": "single", "_rev": "1-0f", "v": 1],
                        ["_id": "bad", "_rev": "2-ab", "_revisions": ["start": 2, "ids": ["cd", "ef"]]],
                    ],
                ])
            #expect(reply.status == 201, "\(reply.text)")
            let results = try #require(reply.json?.arrayValue?.compactMap { $0.objectValue })
            #expect(results.count == 6)
            #expect(results[0]["rev"] == "3-cc")
            #expect(results[1]["rev"] == "2-dd")
            #expect(results[2]["status"] == 400)
            #expect(results[2]["reason"]?.stringValue?.hasPrefix("Bad _revisions") == true)
            #expect(results[3]["status"] == 400)
            #expect(results[3]["id"] == nil)
            #expect(results[4]["rev"] == "1-0f")
            #expect(results[5]["status"] == 400, "_rev disagrees with _revisions")
            #expect(try await gateway.database.document("no-rev") == nil)
            #expect(try await gateway.database.document("bad") == nil)

            let history = try await client.get("/db/r?revs=true")
            #expect(history.object?["_rev"] == "3-cc", "the higher generation wins")
            #expect(history.object?["_revisions"] == ["start": 3, "ids": ["cc", "bb", "aa"]])
            let leaves = try #require(try await client.get("/db/r?open_revs=all").json?.arrayValue)
            let leafRevs = Set(leaves.compactMap { $0.objectValue?["ok"]?.objectValue?["_rev"]?.stringValue })
            #expect(leafRevs == ["3-cc", "2-dd"])
            let branch = try await client.get("/db/r?rev=2-dd&revs=true")
            #expect(branch.object?["v"] == 2)
            #expect(branch.object?["_revisions"] == ["start": 2, "ids": ["dd", "aa"]])

            // Sent again, as a replicator retrying would: nothing changes, the same revisions are answered.
            let sequence = try await gateway.database.lastSequence()
            let again = try await client.send(
                "POST", "/db/_bulk_docs",
                json: ["new_edits": false, "docs": [["_id": "single", "_rev": "1-0f", "v": 1]]])
            #expect(again.json?.arrayValue?.first?.objectValue?["rev"] == "1-0f")
            #expect(try await gateway.database.lastSequence() == sequence)

            // A tombstone on the winning branch: the live conflicting branch becomes current.
            let tombstone = try await client.send(
                "POST", "/db/_bulk_docs",
                json: [
                    "new_edits": false,
                    "docs": [["_id": "r", "_deleted": true, "_revisions": ["start": 4, "ids": ["ff", "cc"]]]],
                ])
            #expect(tombstone.json?.arrayValue?.first?.objectValue?["rev"] == "4-ff", "\(tombstone.text)")
            #expect(try await client.get("/db/r").object?["_rev"] == "2-dd")

            let notBoolean = try await client.send(
                "POST", "/db/_bulk_docs", json: ["new_edits": "no", "docs": [["_id": "x", "_rev": "1-aa"]]])
            #expect(notBoolean.status == 400)
            #expect(try await gateway.database.document("x") == nil)
        }
    }

    @Test("PUT ?new_edits=false stores the body's _rev with its history; without a usable _rev it is a 400")
    func putKeepingRevision() async throws {
        try await RESTAPITests.withAuthenticatedGateway { gateway, client in
            let put = try await client.send(
                "PUT", "/db/p?new_edits=false",
                json: ["_rev": "2-b2", "_revisions": ["start": 2, "ids": ["b2", "a1"]], "on": true])
            #expect(put.status == 201, "\(put.text)")
            #expect(put.object?["rev"] == "2-b2")
            #expect(put.object?["ok"] == true)
            #expect(try await gateway.database.document("p")?.revID.description == "2-b2")
            #expect(try await client.get("/db/p?revs=true").object?["_revisions"]?.objectValue?["ids"] == ["b2", "a1"])

            let missing = try await client.send("PUT", "/db/q?new_edits=false", json: ["on": true])
            #expect(missing.status == 400)
            #expect(missing.error.reason?.hasPrefix("Bad _revisions") == true)
            let otherID = try await client.send("PUT", "/db/q?new_edits=false", json: ["_id": "z", "_rev": "1-aa"])
            #expect(otherID.status == 400)
            let badRevisions = try await client.send(
                "PUT", "/db/q?new_edits=false", json: ["_rev": "1-aa", "_revisions": ["start": 0, "ids": ["aa"]]])
            #expect(badRevisions.status == 400)
            #expect(try await gateway.database.document("q") == nil)
            #expect(try await client.send("PUT", "/db/q?new_edits=maybe", json: ["_rev": "1-aa"]).status == 400)
        }
    }

    @Test("_all_docs: keys, startkey/endkey, limit, skip, descending, include_docs, GET and POST")
    func allDocs() async throws {
        try await RESTAPITests.withAuthenticatedGateway { gateway, client in
            let database = try await gateway.database
            for id in ["a", "b", "c", "d"] {
                try await database.save(id, body: Data(#"{"id":"\#(id)"}"#.utf8), parentRevID: nil)
            }
            let deleted = try await database.save("e", body: Data("{}".utf8), parentRevID: nil)
            try await database.delete("e", parentRevID: deleted.revID)

            func ids(_ reply: RESTClient.Reply) -> [String] {
                reply.object?["rows"]?.arrayValue?.compactMap { $0.objectValue?["key"]?.stringValue } ?? []
            }
            let all = try await client.get("/db/_all_docs")
            #expect(ids(all) == ["a", "b", "c", "d"])
            #expect(all.object?["total_rows"] == 4)
            #expect(ids(try await client.get("/db/_all_docs?startkey=%22b%22&endkey=%22c%22")) == ["b", "c"])
            #expect(ids(try await client.get("/db/_all_docs?descending=true&limit=2")) == ["d", "c"])
            #expect(ids(try await client.get("/db/_all_docs?skip=1&limit=2")) == ["b", "c"])
            let withDocs = try await client.get("/db/_all_docs?include_docs=true&limit=1")
            #expect(withDocs.object?["rows"]?.arrayValue?.first?.objectValue?["doc"]?.objectValue?["id"] == "a")

            let keyed = try await client.send("POST", "/db/_all_docs", json: ["keys": ["c", "zz", "e"]])
            let rows = try #require(keyed.object?["rows"]?.arrayValue)
            #expect(rows.count == 3)
            #expect(rows[0].objectValue?["id"] == "c")
            #expect(rows[1].objectValue?["error"] == "not_found")
            #expect(rows[2].objectValue?["value"]?.objectValue?["deleted"] == true)
            #expect(ids(try await client.get("/db/_all_docs?keys=%5B%22d%22%5D")) == ["d"])
            #expect(try await client.get("/db/_all_docs?limit=x").status == 400)
        }
    }

    @Test("_all_docs as Sync Gateway answers it: byte order, plain or JSON keys, limit=0, total_rows and update_seq")
    func allDocsAsSyncGateway() async throws {
        try await RESTAPITests.withAuthenticatedGateway { gateway, client in
            let database = try await gateway.database
            for id in ["b", "ä", "B", "a", "A", "a b"] {
                try await database.save(id, body: Data("{}".utf8), parentRevID: nil)
            }
            func ids(_ reply: RESTClient.Reply) -> [String] {
                reply.object?["rows"]?.arrayValue?.compactMap { $0.objectValue?["id"]?.stringValue } ?? []
            }
            // UTF-8 byte order, as N1QL's ORDER BY META().id: upper case first, "ä" (0xC3 0xA4) after ASCII.
            let all = try await client.get("/db/_all_docs")
            #expect(ids(all) == ["A", "B", "a", "a b", "b", "ä"])
            #expect(all.object?["total_rows"] == 6)
            #expect(all.object?["update_seq"] == .integer(Int(try await database.lastSequence())))
            #expect(all.object?["offset"] == nil)

            let limited = try await client.get("/db/_all_docs?limit=2")
            #expect(ids(limited) == ["A", "B"])
            #expect(limited.object?["total_rows"] == 2, "the rows answered, as Sync Gateway counts them")
            #expect(ids(try await client.get("/db/_all_docs?limit=0")).count == 6)
            #expect(ids(try await client.get("/db/_all_docs?startkey=a&endkey=b")) == ["a", "a b", "b"])
            #expect(ids(try await client.get("/db/_all_docs?startkey=%22a%22&endkey=%22a%20b%22")) == ["a", "a b"])
            #expect(ids(try await client.get("/db/_all_docs?startkey=b&endkey=")) == ["b", "ä"])
            #expect(
                ids(try await client.get("/db/_all_docs?descending=true&startkey=b&endkey=a")) == ["b", "a b", "a"])
        }
    }

    @Test("_bulk_get and _revs_diff")
    func bulkGetAndRevsDiff() async throws {
        try await RESTAPITests.withAuthenticatedGateway { gateway, client in
            let database = try await gateway.database
            let first = try await database.save("x", body: Data(#"{"v":1}"#.utf8), parentRevID: nil)
            let second = try await database.save("x", body: Data(#"{"v":2}"#.utf8), parentRevID: first.revID)

            let bulk = try await client.send(
                "POST", "/db/_bulk_get?revs=true",
                json: ["docs": [["id": "x", "rev": .string(first.revID.description)], ["id": "x"], ["id": "nope"]]])
            let results = try #require(bulk.object?["results"]?.arrayValue)
            #expect(results.count == 3)
            let old = results[0].objectValue?["docs"]?.arrayValue?.first?.objectValue?["ok"]?.objectValue
            #expect(old?["v"] == 1)
            let current = results[1].objectValue?["docs"]?.arrayValue?.first?.objectValue?["ok"]?.objectValue
            #expect(current?["_rev"] == .string(second.revID.description))
            #expect(current?["_revisions"]?.objectValue?["start"] == 2)
            #expect(results[2].objectValue?["docs"]?.arrayValue?.first?.objectValue?["error"] != nil)

            let diff = try await client.send(
                "POST", "/db/_revs_diff",
                json: [
                    "x": [.string(second.revID.description), "3-0123456789abcdef0123456789abcdef01234567"],
                    "new": ["1-0123456789abcdef0123456789abcdef01234567"],
                ])
            let answer = try #require(diff.object)
            #expect(answer["x"]?.objectValue?["missing"] == ["3-0123456789abcdef0123456789abcdef01234567"])
            #expect(
                answer["x"]?.objectValue?["possible_ancestors"]?.arrayValue?.first == .string(second.revID.description))
            #expect(answer["new"]?.objectValue?["missing"]?.arrayValue?.count == 1)
            #expect(try await client.send("POST", "/db/_revs_diff", json: ["x": ["bad"]]).status == 400)
        }
    }

    @Test("_bulk_get and open_revs: multipart/mixed when Accept asks for multipart/, JSON by default, 406 otherwise")
    func multipartAnswers() async throws {
        try await RESTAPITests.withAuthenticatedGateway { gateway, client in
            let database = try await gateway.database
            let first = try await database.save("x", body: Data(#"{"v":1}"#.utf8), parentRevID: nil)
            let second = try await database.save("x", body: Data(#"{"v":2}"#.utf8), parentRevID: first.revID)
            let request: JSONValue = ["docs": [["id": "x", "rev": .string(first.revID.description)], ["id": "nope"]]]

            let multipart = try await client.send(
                "POST", "/db/_bulk_get?revs=true", json: request, headers: ["Accept": "multipart/mixed"])
            #expect(multipart.status == 200, "\(multipart.text)")
            let parts = try Self.multipartParts(multipart)
            #expect(parts.count == 2)
            #expect(parts.first?.headers["content-type"] == "application/json")
            #expect(parts.first?.headers["x-doc-id"] == "x")
            #expect(parts.first?.headers["x-rev-id"] == first.revID.description)
            let old = try JSONValue(parsing: Array(try #require(parts.first).body)).objectValue
            #expect(old?["v"] == 1)
            #expect(old?["_revisions"]?.objectValue?["start"] == 1)
            #expect(parts.last?.headers["content-type"] == #"application/json; error="true""#)
            let missing = try JSONValue(parsing: Array(try #require(parts.last).body)).objectValue
            #expect(missing?["status"] == 404)
            #expect(missing?["id"] == "nope")

            let json = try await client.send(
                "POST", "/db/_bulk_get", json: request, headers: ["Accept": "application/json"])
            #expect(json.headers["content-type"] == "application/json")
            #expect(json.object?["results"]?.arrayValue?.count == 2)
            let refused = try await client.send(
                "POST", "/db/_bulk_get", json: request, headers: ["Accept": "text/html"])
            #expect(refused.status == 406)
            #expect(refused.error.reason?.contains("multipart/mixed") == true)

            let openRevs = try await client.send(
                "GET", "/db/x?open_revs=%5B%22\(second.revID)%22,%229-ab%22%5D",
                headers: ["Accept": "multipart/related"])
            let revisions = try Self.multipartParts(openRevs)
            #expect(revisions.count == 2)
            #expect(revisions.first?.headers["x-rev-id"] == second.revID.description)
            #expect(try JSONValue(parsing: Array(try #require(revisions.last).body)) == ["missing": "9-ab"])
            #expect(revisions.last?.headers["content-type"] == #"application/json; error="true""#)
            #expect(try await client.send("GET", "/db/x?open_revs=all", headers: ["Accept": "image/png"]).status == 406)
            #expect(try await client.get("/db/x?open_revs=all").json?.arrayValue?.count == 1)
        }
    }

    /// The parts of a `multipart/mixed` answer, read strictly as RFC 2046 frames them. Bytes, not `String`s:
    /// Swift counts "\r\n" as one character.
    static func multipartParts(_ reply: RESTClient.Reply) throws -> [(headers: [String: String], body: Data)] {
        let contentType = try #require(reply.headers["content-type"])
        #expect(contentType.hasPrefix("multipart/mixed; "))
        let boundaryStart = try #require(contentType.range(of: "boundary=\""))
        let boundary = Array("--\(contentType[boundaryStart.upperBound...].prefix { $0 != "\"" })".utf8)
        let bytes = Array(reply.body)
        let crlf = Array("\r\n".utf8)
        func find(_ needle: [UInt8], from start: Int) -> Int? {
            guard needle.count <= bytes.count - start else { return nil }
            return (start...(bytes.count - needle.count)).first { Array(bytes[$0..<$0 + needle.count]) == needle }
        }
        var delimiters: [Int] = []
        var position = 0
        while let found = find(boundary, from: position) {
            delimiters.append(found)
            position = found + boundary.count
        }
        #expect(delimiters.first == 0, "no preamble")
        let closing = try #require(delimiters.last)
        #expect(
            Array(bytes[(closing + boundary.count)...]) == Array("--\r\n".utf8), "the closing delimiter ends the body")
        var parts: [(headers: [String: String], body: Data)] = []
        for (start, end) in zip(delimiters, delimiters.dropFirst()) {
            let contentStart = start + boundary.count + 2
            try #require(Array(bytes[(contentStart - 2)..<contentStart]) == crlf)
            try #require(Array(bytes[(end - 2)..<end]) == crlf)
            let content = Array(bytes[contentStart..<(end - 2)])
            let split = try #require(
                (0..<max(0, content.count - 3)).first { Array(content[$0..<$0 + 4]) == Array("\r\n\r\n".utf8) })
            var headers: [String: String] = [:]
            for line in String(decoding: content[..<split], as: UTF8.self).split(separator: "\r\n") {
                let colon = try #require(line.firstIndex(of: ":"))
                headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
                    in: .whitespaces)
            }
            parts.append((headers, Data(content[(split + 4)...])))
        }
        return parts
    }

    @Test("_local documents: compare-and-swap put, get, delete; never in the changes feed")
    func localDocuments() async throws {
        try await RESTAPITests.withAuthenticatedGateway { gateway, client in
            let put = try await client.send("PUT", "/db/_local/tool-state", json: ["cursor": 7])
            #expect(put.status == 201, "\(put.text)")
            let rev = try #require(put.object?["rev"]?.stringValue)
            let read = try await client.get("/db/_local/tool-state")
            #expect(read.object?["cursor"] == 7)
            #expect(read.object?["_id"] == "_local/tool-state")
            #expect(try await client.send("PUT", "/db/_local/tool-state", json: ["cursor": 8]).status == 409)
            #expect(
                try await client.send("PUT", "/db/_local/tool-state", json: ["_rev": .string(rev), "cursor": 8]).status
                    == 201)
            #expect(try await client.get("/db/_changes").object?["results"] == [])
            #expect(try await client.send("DELETE", "/db/_local/tool-state").status == 200)
            #expect(try await client.get("/db/_local/tool-state").status == 404)
        }
    }
}

@Suite("REST blobs")
struct RESTBlobTests {
    @Test("a blob PUT over REST reaches a pulling peer as an attachment; a pushed blob downloads over REST")
    func blobsBothWays() async throws {
        var settings = TestGateway.settings()
        settings.restAPI = .readWrite
        try await TestGateway.run(settings: settings) { gateway in
            let client = RESTClient(port: gateway.port)
            let content = Data((0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
            let put = try await client.send(
                "PUT", "/db/manual/manual.pdf", body: content, headers: ["Content-Type": "application/pdf"])
            #expect(put.status == 201, "\(put.text)")
            let digest = BlobDigest(of: content)
            let photo = Data("not really a jpeg".utf8)

            let stored = try #require(try await gateway.database.document("manual"))
            let entry = try JSONValue(parsing: Array(stored.body)).objectValue?["_attachments"]?.objectValue?[
                "manual.pdf"]?.objectValue
            #expect(entry?["digest"] == .string(digest.description))
            #expect(entry?["length"] == .integer(content.count))
            #expect(entry?["content_type"] == "application/pdf")
            #expect(entry?["stub"] == true)

            let download = try await client.get("/db/manual/manual.pdf")
            #expect(download.status == 200)
            #expect(download.body == content)
            #expect(download.headers["content-type"] == "application/pdf")
            #expect(try await client.get("/db/manual/other.pdf").status == 404)

            try await LocalDatabase.run { device in
                try await device.replicate(with: gateway, .pull)
                #expect(try await device.database.document("manual") != nil)
                #expect(try device.database.blobs.read(digest) == content, "the puller fetched the blob by digest")

                let photoDigest = try device.database.blobs.write(photo)
                let body: JSONValue = [
                    "photo": [
                        "@type": "blob", "digest": .string(photoDigest.description),
                        "length": .integer(photo.count), "content_type": "image/jpeg",
                    ]
                ]
                try await device.database.save("snap", body: Data(body.serialized), parentRevID: nil)
                try await device.replicate(with: gateway, .push)
            }
            let pushed = try await client.get("/db/snap/photo")
            #expect(pushed.status == 200)
            #expect(pushed.body == photo)
            #expect(pushed.headers["content-type"] == "image/jpeg")
        }
    }
}

@Suite("The REST API's OpenAPI document")
struct RESTOpenAPITests {
    @Test("every route the listener serves is in /_openapi.json, and every route listed there is served")
    func documentMatchesRoutes() async throws {
        try await RESTAPITests.withAuthenticatedGateway { gateway, client in
            let reply = try await client.get("/_openapi.json")
            #expect(reply.status == 200)
            let document = try #require(reply.object)
            #expect(document["openapi"] == "3.1.0")
            var listed: Set<String> = []
            for (path, item) in try #require(document["paths"]?.objectValue) {
                for (method, operation) in try #require(item.objectValue) {
                    listed.insert("\(method.uppercased()) \(path)")
                    // OpenAPI requires each response to be a reference or to carry a text description.
                    for (status, response) in operation.objectValue?["responses"]?.objectValue ?? [:] {
                        let fields = response.objectValue
                        #expect(
                            fields?["$ref"]?.stringValue != nil || fields?["description"]?.stringValue != nil,
                            "\(method) \(path) \(status)")
                    }
                }
            }
            let routes = gateway.listener.makeHTTPRouter().routes.map { "\($0.method) \($0.path)" }
            // The router answers HEAD wherever it answers GET (`autoGenerateHeadEndpoints`), without a route of its own.
            let heads = routes.filter { $0.hasPrefix("GET ") }.map { "HEAD " + $0.dropFirst("GET ".count) }
            let served = Set(routes + heads)
            #expect(served.subtracting(listed).sorted() == [], "served but not documented")
            #expect(listed.subtracting(served).sorted() == [], "documented but not served")
            #expect(try await RESTClient(port: gateway.port).get("/_openapi.json").status == 401)
        }
    }
}
