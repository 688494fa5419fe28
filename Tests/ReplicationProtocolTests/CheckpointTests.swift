import SyncIdentifiers
import Testing

@testable import ReplicationProtocol

@Suite struct CheckpointTests {
    @Test func getCheckpointFromFixture() throws {
        let request = try GetCheckpointRequest(
            properties: props([("Profile", "getCheckpoint"), ("client", "cp-xyhcuHG5W7n44wkdFnA5V1Rmn0M=")]), body: [])
        #expect(request.client == "cp-xyhcuHG5W7n44wkdFnA5V1Rmn0M=")
        #expect(request.collection == nil)
        #expect(
            pairs(request.encode().properties) == ["Profile=getCheckpoint", "client=cp-xyhcuHG5W7n44wkdFnA5V1Rmn0M="])
        #expect(
            try roundTrip(GetCheckpointRequest(client: "cp-a", collection: 1))
                == GetCheckpointRequest(client: "cp-a", collection: 1))
    }

    @Test func getCheckpointWithoutClient() {
        expectProtocolError(.missingProperty("client", profile: .getCheckpoint)) {
            _ = try GetCheckpointRequest(properties: props([("Profile", "getCheckpoint")]), body: [])
        }
    }

    @Test func getCheckpointReplyKeepsBodyVerbatim() throws {
        let body = bytes(#"{"time":1795314773,"local":3}"#)
        let reply = try GetCheckpointReply(properties: props([("rev", "1-cc")]), body: body)
        #expect(reply.revision == "1-cc")
        #expect(reply.body == body)
        #expect(try reply.checkpoint() == Checkpoint(time: 1_795_314_773, local: 3))
        #expect(try roundTrip(reply) == reply)
    }

    @Test func setCheckpointFirstSaveFromFixture() throws {
        let request = try SetCheckpointRequest(
            properties: props([
                ("Profile", "setCheckpoint"), ("client", "cp-xyhcuHG5W7n44wkdFnA5V1Rmn0M="), ("rev", ""),
            ]),
            body: bytes(#"{"time":1795314761,"local":3}"#))
        #expect(request.revision == nil)
        let (properties, body) = request.encode()
        // LiteCore writes `rev` even when empty.
        #expect(pairs(properties) == ["Profile=setCheckpoint", "client=cp-xyhcuHG5W7n44wkdFnA5V1Rmn0M=", "rev="])
        #expect(body == bytes(#"{"time":1795314761,"local":3}"#))
    }

    @Test func setCheckpointInCollectionModeFromFixture() throws {
        let request = try SetCheckpointRequest(
            properties: props([
                ("Profile", "setCheckpoint"), ("collection", "1"),
                ("client", "cp-GZ4S+h+bdO11MZJYOiXxch8BuHPB3n14SdbsKEUMYBE="), ("rev", "2-cc"),
            ]),
            body: bytes(#"{"time":1795316086,"local":2,"remote":2}"#))
        #expect(request.collection == 1)
        #expect(request.revision == "2-cc")
        #expect(try request.checkpoint() == Checkpoint(time: 1_795_316_086, local: 2, remote: 2))
        #expect(try roundTrip(request) == request)
        #expect(try roundTrip(SetCheckpointReply(revision: "3-cc")) == SetCheckpointReply(revision: "3-cc"))
    }

    @Test func setCheckpointRejectsNonObjectBody() {
        expectProtocolError(.invalidBody(context: "setCheckpoint body", reason: "expected a JSON object, got an array"))
        {
            _ = try SetCheckpointRequest(properties: props([("client", "cp-1")]), body: bytes("[1]"))
        }
        expectProtocolError(.invalidJSON(context: "setCheckpoint body", reason: "unterminated object at byte 9")) {
            _ = try SetCheckpointRequest(properties: props([("client", "cp-1")]), body: bytes(#"{"time":1"#))
        }
    }

    @Test func checkpointEncodesInLiteCoreKeyOrder() throws {
        #expect(Checkpoint(time: 1_795_314_763).json == bytes(#"{"time":1795314763}"#))
        #expect(Checkpoint(time: 1_795_314_763, remote: 2).json == bytes(#"{"time":1795314763,"remote":2}"#))
        #expect(
            Checkpoint(time: 1_795_314_763, local: 4, remote: 2).json
                == bytes(#"{"time":1795314763,"local":4,"remote":2}"#))
        let withHoles = Checkpoint(
            time: 1_717_171_717, local: 1234, localCompleted: [0..<1200, 1203..<1235], remote: "12::34")
        #expect(
            String(decoding: withHoles.json, as: UTF8.self)
                == #"{"time":1717171717,"local":1234,"localCompleted":[0,1200,1203,32],"remote":"12::34"}"#)
        #expect(try Checkpoint(json: withHoles.json) == withHoles)
        #expect(withHoles.since == .string("12::34"))
    }

    @Test func checkpointReadsSyncGatewayStyleBody() throws {
        let checkpoint = try Checkpoint(json: bytes(#"{"_rev":"0-3","remote":"12::34","time":1716000000}"#))
        #expect(checkpoint.remote == .string("12::34"))
        #expect(checkpoint.local == 0)
        expectProtocolError(.invalidBody(context: "checkpoint", reason: "'local' must be a non-negative integer")) {
            _ = try Checkpoint(json: bytes(#"{"local":-1}"#))
        }
        expectProtocolError(
            .invalidBody(
                context: "checkpoint", reason: "'localCompleted' must be a flat array of (start, length) integer pairs")
        ) {
            _ = try Checkpoint(json: bytes(#"{"localCompleted":[0,1,2]}"#))
        }
    }
}

@Suite struct GetCollectionsTests {
    @Test func requestFromFixture() throws {
        let body = bytes(
            #"{"checkpoint_ids":["cp-3Dqq2Cs8mtcEcTrBykZ5jdP5PoXeEGKplE1I4fUi1PU=","cp-GZ4S+h+bdO11MZJYOiXxch8BuHPB3n14SdbsKEUMYBE="],"collections":["store.inventory","store.orders"]}"#
        )
        let request = try GetCollectionsRequest(properties: props([("Profile", "getCollections")]), body: body)
        #expect(
            request.collections == [
                try CollectionName(scope: "store", name: "inventory"),
                try CollectionName(scope: "store", name: "orders"),
            ])
        #expect(request.checkpointIDs.count == 2)
        #expect(request.encode().body == body)
        #expect(pairs(request.encode().properties) == ["Profile=getCollections"])
    }

    @Test func collectionsAreWrittenAsLiteCoreWritesThem() throws {
        let inDefaultScope = try CollectionName(scope: "_default", name: "coll2")
        let scoped = try CollectionName(scope: "s", name: "c")
        let request = GetCollectionsRequest(
            checkpointIDs: ["a", "b", "c"], collections: [.default, inDefaultScope, scoped])
        #expect(
            request.encode().body
                == bytes(#"{"checkpoint_ids":["a","b","c"],"collections":["_default","coll2","s.c"]}"#))
        #expect(try GetCollectionsRequest(properties: MessageProperties(), body: request.encode().body) == request)
    }

    @Test func malformedCollectionNamesAreRefused() {
        for (name, expected) in [
            (
                "a.b.c",
                ProtocolError.invalidCollectionName("a.b.c", reason: "expected 'collection' or 'scope.collection'")
            ),
            (".c", .invalidCollectionName(".c", reason: "scope and collection names must not be empty")),
            ("_c.", .invalidCollectionName("_c.", reason: "scope and collection names must not be empty")),
        ] {
            expectProtocolError(expected) {
                _ = try GetCollectionsRequest(
                    properties: MessageProperties(),
                    body: bytes(#"{"checkpoint_ids":["a"],"collections":["\#(name)"]}"#))
            }
        }
    }

    /// Couchbase's naming rules make these names of no collection; they are not malformed requests.
    @Test func namesAgainstTheNamingRulesAreNoCollection() throws {
        let request = try GetCollectionsRequest(
            properties: MessageProperties(),
            body: bytes(
                #"{"checkpoint_ids":["a","b","c","d"],"collections":["_system._mobile","s.%c","s.a b","coll"]}"#))
        let coll = try CollectionName(scope: "_default", name: "coll")
        #expect(request.collections == [nil, nil, nil, coll])
    }

    @Test func malformedRequests() {
        expectProtocolError(
            .invalidBody(
                context: "getCollections body", reason: "'checkpoint_ids' has 1 entries but 'collections' has 2")
        ) {
            _ = try GetCollectionsRequest(
                properties: MessageProperties(), body: bytes(#"{"checkpoint_ids":["a"],"collections":["x","y"]}"#))
        }
        expectProtocolError(.invalidBody(context: "getCollections body", reason: "collection 'x' is listed twice")) {
            _ = try GetCollectionsRequest(
                properties: MessageProperties(),
                body: bytes(#"{"checkpoint_ids":["a","b"],"collections":["x","_default.x"]}"#))
        }
        expectProtocolError(.invalidBody(context: "getCollections body", reason: "'collections' is empty")) {
            _ = try GetCollectionsRequest(
                properties: MessageProperties(), body: bytes(#"{"checkpoint_ids":[],"collections":[]}"#))
        }
    }

    @Test func repliesFromFixture() throws {
        let missing = try GetCollectionsReply(properties: MessageProperties(), body: bytes("[{},null]"))
        #expect(missing.entries == [.noCheckpoint, .missing])
        #expect(missing.encode().body == bytes("[{},null]"))

        let stored = bytes(
            #"[{"local":2,"remote":2,"rev":"3-cc","time":1795316086},{"local":2,"remote":2,"rev":"3-cc","time":1795316086}]"#
        )
        let reply = try GetCollectionsReply(properties: MessageProperties(), body: stored)
        #expect(
            reply.entries[0] == .checkpoint(revision: "3-cc", body: ["local": 2, "remote": 2, "time": 1_795_316_086]))
        #expect(reply.encode().body == stored)
    }

    @Test func replyEntryFromStoredBodySortsKeysAndAddsRev() throws {
        let entry = try GetCollectionsReply.Entry.checkpoint(
            revision: "3-cc", storedBody: bytes(#"{"time":1795316086,"local":2,"remote":2}"#))
        let body = GetCollectionsReply(entries: [entry]).encode().body
        #expect(body == bytes(#"[{"local":2,"remote":2,"rev":"3-cc","time":1795316086}]"#))
    }

    @Test func syncGatewayUnderscoreRevIsAccepted() throws {
        let reply = try GetCollectionsReply(
            properties: MessageProperties(), body: bytes(#"[{"_rev":"0-2","remote":5}]"#))
        #expect(reply.entries == [.checkpoint(revision: "0-2", body: ["remote": 5])])
        expectProtocolError(
            .invalidRow(context: "getCollections reply", index: 0, reason: "a stored checkpoint has no 'rev'")
        ) {
            _ = try GetCollectionsReply(properties: MessageProperties(), body: bytes(#"[{"remote":5}]"#))
        }
        expectProtocolError(
            .invalidRow(context: "getCollections reply", index: 1, reason: "expected null or an object, got a number")
        ) {
            _ = try GetCollectionsReply(properties: MessageProperties(), body: bytes("[{},3]"))
        }
    }
}
