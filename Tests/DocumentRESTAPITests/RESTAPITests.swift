import EdgeConfig
import EdgeGatewayTestSupport
import EdgeStore
import Foundation
import ReplicationProtocol
import SyncIdentifiers
import SyncJSON
import Testing

@testable import EdgeReplication

@Suite("The REST API on a sync listener")
struct RESTAPITests {
    /// A Basic-authenticated listener (REST read-write by default) and a client logged in as alice.
    static func withAuthenticatedGateway(
        adjusting adjust: (inout ListenerSettings) -> Void = { _ in },
        collections: [CollectionName] = [.default],
        _ body: @Sendable (TestGateway, RESTClient) async throws -> Void
    ) async throws {
        var settings = TestGateway.settings(authentication: TestGateway.users)
        adjust(&settings)
        try await TestGateway.run(settings: settings, collections: collections) { gateway in
            try await body(gateway, RESTClient(port: gateway.port, credentials: "alice:s3cret"))
        }
    }

    @Test("HEAD is answered wherever GET is: same status and headers, the document's ETag included, no body")
    func headAnswersAsGet() async throws {
        try await Self.withAuthenticatedGateway { _, client in
            let created = try await client.send("PUT", "/db/doc1", json: ["name": "pump"])
            let rev = try #require(created.object?["rev"]?.stringValue)
            let get = try await client.get("/db/doc1")
            let head = try await client.send("HEAD", "/db/doc1")
            #expect(head.status == 200)
            #expect(head.body.isEmpty)
            #expect(head.headers["etag"] == "\"\(rev)\"")
            #expect(head.headers["etag"] == get.headers["etag"])
            #expect(head.headers["content-type"] == get.headers["content-type"])
            #expect(head.headers["content-length"] == String(get.body.count))
            #expect(try await client.send("HEAD", "/db").status == 200)
            #expect(try await client.send("HEAD", "/db/never").status == 404)
            #expect(try await client.send("HEAD", "/nope").status == 404)
            #expect(try await client.send("HEAD", "/").status == 200)
            #expect(try await RESTClient(port: client.port).send("HEAD", "/db/doc1").status == 401)
        }
    }

    @Test(
        "python-couchdb opens a database, finds documents, saves and reads one",
        .enabled(if: CouchDBPythonClient.isAvailable, Comment(rawValue: CouchDBPythonClient.unavailableReason)))
    func couchDBClientLibrary() async throws {
        try await Self.withAuthenticatedGateway { gateway, client in
            _ = try await client.send("PUT", "/db/doc1", json: ["name": "pump"])
            let script = """
                db = server["db"]
                doc_id, rev = db.save({"_id": "from-python", "kind": "couchdb"})
                result = {
                    "name": db.name, "has_doc1": "doc1" in db, "has_never": "never" in db,
                    "has_db": "db" in server, "has_nope": "nope" in server,
                    "saved": rev, "read": db["from-python"]["kind"],
                }
                """
            let result = try await CouchDBPythonClient.run(
                script, url: "http://alice:s3cret@127.0.0.1:\(client.port)/")
            let object = try #require(result.objectValue)
            #expect(object["name"] == "db")
            #expect(object["has_doc1"] == true)
            #expect(object["has_never"] == false)
            #expect(object["has_db"] == true)
            #expect(object["has_nope"] == false)
            #expect(object["read"] == "couchdb")
            let saved = try #require(object["saved"]?.stringValue)
            #expect(try await gateway.database.document("from-python")?.revID.description == saved)
        }
    }

    @Test("documents: create, read, compare-and-swap update, delete; revs=true and open_revs=all")
    func documentLifecycle() async throws {
        try await Self.withAuthenticatedGateway { gateway, client in
            let created = try await client.send("PUT", "/db/doc1", json: ["name": "pump", "rpm": 1200])
            #expect(created.status == 201, "\(created.text)")
            let rev1 = try #require(created.object?["rev"]?.stringValue)
            #expect(created.object?["id"] == "doc1")
            #expect(try await gateway.database.document("doc1")?.revID.description == rev1)

            let read = try await client.get("/db/doc1")
            #expect(read.status == 200)
            #expect(read.object?["_id"] == "doc1")
            #expect(read.object?["_rev"] == .string(rev1))
            #expect(read.object?["rpm"] == 1200)

            let exists = try await client.send("PUT", "/db/doc1", json: ["name": "again"])
            #expect(exists.status == 409)
            #expect(exists.error.error == "conflict")

            let updated = try await client.send("PUT", "/db/doc1?rev=\(rev1)", json: ["name": "pump", "rpm": 1300])
            #expect(updated.status == 201)
            let rev2 = try #require(updated.object?["rev"]?.stringValue)
            #expect(rev2.hasPrefix("2-"))

            let stale = try await client.send("PUT", "/db/doc1", json: ["_rev": .string(rev1), "rpm": 1])
            #expect(stale.status == 409)
            #expect(try await gateway.database.document("doc1")?.revID.description == rev2)

            let history = try await client.get("/db/doc1?revs=true")
            let revisions = try #require(history.object?["_revisions"]?.objectValue)
            #expect(revisions["start"] == 2)
            #expect(revisions["ids"]?.arrayValue?.count == 2)
            #expect(revisions["ids"]?.arrayValue?.last == .string(String(rev1.dropFirst(2))))

            let old = try await client.get("/db/doc1?rev=\(rev1)")
            #expect(old.status == 200)
            #expect(old.object?["rpm"] == 1200)

            let openRevs = try await client.get("/db/doc1?open_revs=all")
            #expect(openRevs.json?.arrayValue?.first?.objectValue?["ok"]?.objectValue?["_rev"] == .string(rev2))

            let noRev = try await client.send("DELETE", "/db/doc1")
            #expect(noRev.status == 409)
            let deleted = try await client.send("DELETE", "/db/doc1?rev=\(rev2)")
            #expect(deleted.status == 200, "\(deleted.text)")
            #expect(try await gateway.database.document("doc1")?.deleted == true)
            let gone = try await client.get("/db/doc1")
            #expect(gone.status == 404)
            #expect(gone.error.reason == "deleted")
            let never = try await client.get("/db/never")
            #expect(never.error.error == "not_found")
            #expect(never.error.reason == "missing")

            let posted = try await client.send("POST", "/db", json: ["kind": "generated"])
            #expect(posted.status == 200)
            let generatedID = try #require(posted.object?["id"]?.stringValue)
            #expect(generatedID.count == 32)
            #expect(try await gateway.database.document(generatedID) != nil)

            let info = try await client.get("/db")
            #expect(info.object?["doc_count"] == 1)
            #expect(info.object?["update_seq"] == .integer(Int(try await gateway.database.lastSequence())))
            #expect(info.object?["collections"] == ["_default._default"])
        }
    }

    @Test("bad requests each get their own status and reason, and change nothing")
    func errors() async throws {
        try await Self.withAuthenticatedGateway(adjusting: { $0.restMaxBodySize = 2048 }) { gateway, client in
            let first = try await client.send("PUT", "/db/doc", json: ["v": 1])
            let rev = try #require(first.object?["rev"]?.stringValue)
            let sequence = try await gateway.database.lastSequence()

            let malformed = try await client.send("PUT", "/db/doc?rev=\(rev)", body: Data("{\"v\": ".utf8))
            #expect(malformed.status == 400)
            #expect(malformed.error.reason?.hasPrefix("Bad JSON") == true, "\(malformed.text)")

            let notObject = try await client.send("PUT", "/db/doc?rev=\(rev)", json: [1, 2])
            #expect(notObject.status == 400)

            let oversized = try await client.send(
                "PUT", "/db/doc?rev=\(rev)", json: ["blob": .string(String(repeating: "x", count: 4096))])
            #expect(oversized.status == 413)
            #expect(oversized.error.reason?.contains("2048") == true)

            let badRev = try await client.send("PUT", "/db/doc?rev=banana", json: ["v": 2])
            #expect(badRev.status == 400)
            #expect(badRev.error.reason == "invalid revision ID 'banana': expected <generation>-<digest>")

            let reserved = try await client.send("PUT", "/db/doc?rev=\(rev)", json: ["_secret": 1])
            #expect(reserved.status == 400)

            for path in ["/nope/doc", "/db.nope.nope/doc", "/db.a.b.c/doc"] {
                let unknown = try await client.send("PUT", path, json: ["v": 2])
                #expect(unknown.status == 404, "\(path)")
                #expect(unknown.error.error == "not_found")
                #expect(unknown.error.reason?.contains("keyspace") == true, "\(unknown.text)")
            }
            #expect(try await gateway.database.lastSequence() == sequence, "no failed request wrote anything")
            #expect(try await gateway.database.document("doc")?.revID.description == rev)
        }
    }

    @Test("every REST route needs the listener's credentials")
    func authentication() async throws {
        try await Self.withAuthenticatedGateway { gateway, _ in
            try await gateway.database.save("doc", body: Data("{}".utf8), parentRevID: nil)
            for credentials in [nil, "alice:wrong"] {
                let stranger = RESTClient(port: gateway.port, credentials: credentials)
                for (method, path) in [
                    ("GET", "/db"), ("GET", "/db/doc"), ("PUT", "/db/doc2"), ("DELETE", "/db/doc"),
                    ("POST", "/db"), ("GET", "/db/_changes"),
                ] {
                    let body = method == "PUT" || method == "POST" ? Data("{}".utf8) : nil
                    let reply = try await stranger.send(method, path, body: body)
                    #expect(reply.status == 401, "\(method) \(path)")
                    #expect(reply.error.reason == "Login required")
                    #expect(reply.headers["www-authenticate"] == #"Basic charset="UTF-8""#)
                }
            }
            #expect(try await gateway.database.document("doc2") == nil)
        }
    }

    @Test("with auth = none the REST API reads but refuses writes; rest_api = false serves none of it")
    func access() async throws {
        try await TestGateway.run { gateway in
            let client = RESTClient(port: gateway.port)
            try await gateway.database.save("doc", body: Data(#"{"a":1}"#.utf8), parentRevID: nil)
            #expect(try await client.get("/db/doc").object?["a"] == 1)
            let write = try await client.send("PUT", "/db/other", json: ["a": 2])
            #expect(write.status == 403)
            #expect(write.error.reason?.contains("read-only") == true)
            #expect(try await gateway.database.document("other") == nil)
        }
        var open = TestGateway.settings()
        open.restAPI = .readWrite
        try await TestGateway.run(settings: open) { gateway in
            let reply = try await RESTClient(port: gateway.port).send("PUT", "/db/doc", json: ["a": 1])
            #expect(reply.status == 201)
        }
        var off = TestGateway.settings()
        off.restAPI = .off
        try await TestGateway.run(settings: off) { gateway in
            try await gateway.database.save("doc", body: Data("{}".utf8), parentRevID: nil)
            let client = RESTClient(port: gateway.port)
            #expect(try await client.get("/db/doc").status == 404)
            #expect(try await client.get("/db/_changes").status == 404)
            #expect(try await client.get("/db").object?["db_name"] == "db", "database info predates the REST API")
        }
    }

    @Test("keyspaces address named collections")
    func collections() async throws {
        try await Self.withAuthenticatedGateway(collections: [.default, try CollectionName(parsing: "plant.sensors")]) {
            gateway, client in
            #expect(try await client.send("PUT", "/db.plant.sensors/s1", json: ["t": 21]).status == 201)
            let sensors = try CollectionName(scope: "plant", name: "sensors")
            #expect(try await gateway.database.document("s1", in: sensors) != nil)
            #expect(try await gateway.database.document("s1") == nil)
            #expect(try await client.get("/db.plant.sensors").object?["doc_count"] == 1)
            #expect(try await client.get("/db.plant.sensors/s1").object?["t"] == 21)
            #expect(try await client.get("/db/s1").status == 404)
            let changes = try await client.get("/db.plant.sensors/_changes")
            #expect(changes.object?["results"]?.arrayValue?.count == 1)
            #expect(try await client.get("/db").object?["collections"] == ["_default._default", "plant.sensors"])
        }
    }
}

@Suite("The REST changes feed")
struct RESTChangesTests {
    @Test("normal feed: since, limit, include_docs, doc_ids")
    func normal() async throws {
        try await RESTAPITests.withAuthenticatedGateway { gateway, client in
            let revisions = try await saveDocuments(4, prefix: "d", in: try await gateway.database)
            let all = try await client.get("/db/_changes")
            let results = try #require(all.object?["results"]?.arrayValue)
            #expect(results.count == 4)
            #expect(all.object?["last_seq"] == 4)
            #expect(results.first?.objectValue?["changes"] == [["rev": .string(revisions["d-0"]!.description)]])

            let page = try await client.get("/db/_changes?since=1&limit=2&include_docs=true")
            let pageResults = try #require(page.object?["results"]?.arrayValue)
            #expect(pageResults.map { $0.objectValue?["seq"] } == [2, 3])
            #expect(page.object?["last_seq"] == 3)
            #expect(pageResults.first?.objectValue?["doc"]?.objectValue?["_id"] == "d-1")

            let filtered = try await client.get("/db/_changes?doc_ids=%5B%22d-3%22%5D")
            #expect(filtered.object?["results"]?.arrayValue?.map { $0.objectValue?["id"] } == ["d-3"])

            #expect(try await client.get("/db/_changes?feed=sometimes").status == 400)
            #expect(try await client.get("/db/_changes?since=x").status == 400)
        }
    }

    @Test("longpoll waits for the next commit and answers with it")
    func longpoll() async throws {
        try await RESTAPITests.withAuthenticatedGateway { gateway, client in
            let database = try await gateway.database
            try await database.save("before", body: Data("{}".utf8), parentRevID: nil)
            let waiting = Task {
                try await client.get("/db/_changes?feed=longpoll&since=1&timeout=60000", timeout: 90)
            }
            try await Task.sleep(for: .milliseconds(300))
            try await database.save("after", body: Data("{}".utf8), parentRevID: nil)
            let started = ContinuousClock.now
            let reply = try await waiting.value
            #expect(ContinuousClock.now - started < .seconds(30), "woken by the commit, not the timeout")
            #expect(reply.object?["results"]?.arrayValue?.map { $0.objectValue?["id"] } == ["after"])
            #expect(reply.object?["last_seq"] == 2)

            let quiet = try await client.get("/db/_changes?feed=longpoll&since=2&timeout=100")
            #expect(quiet.object?["results"] == [])
            #expect(quiet.object?["last_seq"] == 2)
        }
    }

    @Test("continuous feed streams commits as they happen, one line each, and ends after limit")
    func continuous() async throws {
        try await RESTAPITests.withAuthenticatedGateway { gateway, client in
            let database = try await gateway.database
            let waiting = Task {
                try await client.get("/db/_changes?feed=continuous&limit=2&heartbeat=50", timeout: 90)
            }
            try await Task.sleep(for: .milliseconds(300))
            try await database.save("one", body: Data("{}".utf8), parentRevID: nil)
            try await database.save("two", body: Data("{}".utf8), parentRevID: nil)
            let lines = try await waiting.value.text.split(separator: "\n").map { try JSONValue(parsing: String($0)) }
            #expect(lines.compactMap { $0.objectValue?["id"] } == ["one", "two"])
            #expect(lines.last?.objectValue?["last_seq"] == 2)
        }
    }
}

@Suite("REST writes replicate")
struct RESTReplicationTests {
    @Test("a REST write reaches a continuous puller on the listener and goes upstream")
    func restWritesReplicate() async throws {
        let settings = {
            var settings = TestGateway.settings()
            settings.restAPI = .readWrite
            return settings
        }()
        try await TestGateway.run { upstream in
            try await TestGateway.run(settings: settings) { gateway in
                let gatewayDatabase = try await gateway.database
                let push = ActiveReplicator(
                    database: gatewayDatabase,
                    configuration: .init(
                        remoteURL: "ws://127.0.0.1:\(upstream.port)/\(TestGateway.databaseName)",
                        remoteUUID: "upstream", direction: .push, continuous: true,
                        subprotocols: ReplicationSubprotocol.revisionTreeOffer),
                    logger: testLogger)
                let pushing = Task { try await push.run() }
                defer { pushing.cancel() }
                try await LocalDatabase.run { device in
                    let pull = device.makeReplicator(with: gateway, .pull) { $0.continuous = true }
                    let pulling = Task { try await pull.run() }
                    defer { pulling.cancel() }
                    try await eventually("the puller to be idle") { await pull.status().activity == .idle }

                    let client = RESTClient(port: gateway.port)
                    let reply = try await client.send("PUT", "/db/from-rest", json: ["source": "curl"])
                    #expect(reply.status == 201)
                    let rev = try RevisionID(try #require(reply.object?["rev"]?.stringValue))
                    try await eventually("the device to pull the REST write") {
                        try await device.database.document("from-rest")?.revID == rev
                    }
                    try await eventually("the REST write to reach the upstream") {
                        try await upstream.database.document("from-rest")?.revID == rev
                    }
                    let pulled = try #require(try await device.database.document("from-rest"))
                    #expect(try JSONValue(parsing: Array(pulled.body)).objectValue?["source"] == "curl")

                    // A replication-style write keeps its revision ID and history all the way.
                    let kept = try await client.send(
                        "POST", "/db/_bulk_docs",
                        json: [
                            "new_edits": false,
                            "docs": [["_id": "copied", "_revisions": ["start": 2, "ids": ["b2", "a1"]], "n": 2]],
                        ])
                    #expect(kept.status == 201, "\(kept.text)")
                    let copied = try RevisionID("2-b2")
                    try await eventually("the device to pull the kept revision") {
                        try await device.database.document("copied")?.revID == copied
                    }
                    try await eventually("the kept revision to reach the upstream") {
                        try await upstream.database.document("copied")?.revID == copied
                    }
                    #expect(
                        try await upstream.database.revisionHistory("copied", revID: copied) == [try RevisionID("1-a1")]
                    )
                    pulling.cancel()
                    _ = try? await pulling.value
                }
                pushing.cancel()
                _ = try? await pushing.value
            }
        }
    }
}
