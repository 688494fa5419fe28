import EdgeGatewayTestSupport
import EdgeStore
import Foundation
import SyncJSON
import Testing
import VersionVectors

/// Versions on the REST API, as Sync Gateway 4 shows them: `_cv` after `_rev`, `_changes?version_type=cv`, and a
/// version accepted wherever a revision ID names the revision a write replaces.
@Suite("The REST API shows and accepts versions")
struct RESTVersionTests {
    @Test("GET carries _cv, the current version, right after _rev; a REST write gets a version of this node")
    func currentVersionOnGet() async throws {
        try await RESTAPITests.withAuthenticatedGateway { gateway, client in
            _ = try await client.send("PUT", "/db/pump", json: ["rpm": 1200])
            let reply = try await client.get("/db/pump")
            let object = try #require(reply.object)
            #expect(Array(object.keys.prefix(3)) == ["_id", "_rev", "_cv"])
            let database = try await gateway.database
            let stored = try #require(try await database.document("pump"))
            #expect(object["_cv"]?.stringValue == stored.vector?.current.description)
            #expect(stored.vector?.current.source == database.versionSource)
            // `?rev=` names an exact revision: no version is claimed for it.
            let old = try await client.get("/db/pump?rev=\(stored.revID)")
            #expect(old.object?["_cv"] == nil)
        }
    }

    @Test("_changes?version_type=cv names each change by its current version; rev (the default) by rev-tree ID")
    func changesByVersion() async throws {
        try await RESTAPITests.withAuthenticatedGateway { gateway, client in
            _ = try await client.send("PUT", "/db/a", json: ["n": 1])
            _ = try await client.send("PUT", "/db/b", json: ["n": 2])
            let byVersion = try #require(try await client.get("/db/_changes?version_type=cv&include_docs=true").object)
            let rows = try #require(byVersion["results"]?.arrayValue)
            #expect(rows.count == 2)
            for row in rows {
                let docID = try #require(row.objectValue?["id"]?.stringValue)
                let stored = try #require(try await gateway.database.document(docID))
                let named = row.objectValue?["changes"]?.arrayValue?.first?.objectValue?["rev"]?.stringValue
                #expect(named == stored.vector?.current.description)
                #expect(row.objectValue?["doc"]?.objectValue?["_cv"]?.stringValue == named)
            }
            let byRevision = try #require(try await client.get("/db/_changes").object?["results"]?.arrayValue)
            #expect(
                byRevision.allSatisfy {
                    $0.objectValue?["changes"]?.arrayValue?.first?.objectValue?["rev"]?.stringValue?.contains("-")
                        == true
                })
            let refused = try await client.get("/db/_changes?version_type=hlv")
            #expect(refused.status == 400)
            #expect(refused.error.reason?.contains("version_type must be rev or cv") == true)
        }
    }

    @Test("If-Match, ?rev= and _rev take a version: the current one updates or deletes, an older one is a 409")
    func writesByVersion() async throws {
        try await RESTAPITests.withAuthenticatedGateway { gateway, client in
            _ = try await client.send("PUT", "/db/valve", json: ["open": false])
            let first = try #require(try await client.get("/db/valve").object?["_cv"]?.stringValue)
            let updated = try await client.send(
                "PUT", "/db/valve", json: ["open": true], headers: ["If-Match": "\"\(first)\""])
            #expect(updated.status == 201)
            let second = try #require(try await client.get("/db/valve").object?["_cv"]?.stringValue)
            #expect(second != first)

            let stale = try await client.send("PUT", "/db/valve", json: ["open": false], headers: ["If-Match": first])
            #expect(stale.status == 409)
            #expect(stale.error.reason?.contains("is not the document's current version") == true)
            let malformed = try await client.send("PUT", "/db/valve?rev=zz@nowhere", json: ["open": false])
            #expect(malformed.status == 400)
            let byBody = try await client.send("PUT", "/db/valve", json: ["open": false, "_rev": .string(second)])
            #expect(byBody.status == 201)

            let third = try #require(try await client.get("/db/valve").object?["_cv"]?.stringValue)
            let deleted = try await client.send("DELETE", "/db/valve?rev=\(third)")
            #expect(deleted.status == 200)
            #expect(try await gateway.database.document("valve")?.deleted == true)
        }
    }
}
