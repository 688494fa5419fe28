import Testing

@testable import ReplicationProtocol

@Suite struct SubChangesTests {
    @Test func freshOneShotPullFromFixture() throws {
        let properties = props([
            ("Profile", "subChanges"), ("batch", "200"), ("sendReplacementRevs", "1"), ("versioning", "rev-trees"),
            ("activeOnly", "true"), ("revocations", "true"),
        ])
        let request = try SubChangesRequest(properties: properties, body: [])
        #expect(request.since == nil)
        #expect(!request.continuous)
        #expect(request.batchSize == 200)
        #expect(request.sendReplacementRevs && request.activeOnly && request.revocations)
        #expect(request.versioning == .revisionTrees)
        #expect(request.docIDs == nil)
        #expect(request.encode().properties == properties)
        #expect(request.encode().body.isEmpty)
    }

    @Test func resumingInCollectionModeFromFixture() throws {
        let properties = props([
            ("Profile", "subChanges"), ("collection", "0"), ("since", "2"), ("batch", "200"),
            ("sendReplacementRevs", "1"), ("versioning", "rev-trees"), ("revocations", "true"),
        ])
        let request = try SubChangesRequest(properties: properties, body: [])
        #expect(request.since == 2)
        #expect(request.collection == 0)
        #expect(request.encode().properties == properties)
    }

    @Test func sinceIsRawJSON() throws {
        let request = try SubChangesRequest(
            properties: props([("since", #""12::34""#), ("continuous", "true")]), body: [])
        #expect(request.since == .string("12::34"))
        #expect(request.continuous)
        #expect(request.encode().properties["since"] == #""12::34""#)
        let error = ProtocolError.invalidProperty(
            "since", value: "12::34", profile: .subChanges,
            expected: "a JSON value (unexpected data after the JSON value)")
        expectProtocolError(error) {
            _ = try SubChangesRequest(properties: props([("since", "12::34")]), body: [])
        }
    }

    @Test func filterChannelsAndDocIDs() throws {
        let request = SubChangesRequest(
            continuous: true, filter: SubChangesRequest.channelFilter, channels: ["a", "b"], docIDs: ["d1", "d2"],
            collection: 2)
        let decoded = try roundTrip(request)
        #expect(decoded == request)
        #expect(request.encode().body == bytes(#"{"docIDs":["d1","d2"]}"#))
        #expect(request.encode().properties["channels"] == "a,b")
        let spaced = try SubChangesRequest(properties: props([("channels", "a, b,")]), body: [])
        #expect(spaced.channels == ["a", "b"])
    }

    @Test func malformedDocIDs() {
        expectProtocolError(.invalidBody(context: "subChanges body", reason: "'docIDs' must contain only strings")) {
            _ = try SubChangesRequest(properties: MessageProperties(), body: bytes(#"{"docIDs":[1]}"#))
        }
        expectProtocolError(
            .invalidProperty("batch", value: "lots", profile: .subChanges, expected: "a non-negative decimal integer")
        ) {
            _ = try SubChangesRequest(properties: props([("batch", "lots")]), body: [])
        }
    }

    @Test func unsubChangesRoundTrip() throws {
        #expect(try roundTrip(UnsubChangesRequest(collection: 1)) == UnsubChangesRequest(collection: 1))
    }
}

@Suite struct ChangesTests {
    @Test func rowsFromFixture() throws {
        let body = bytes(
            #"[[1,"passive-doc-0","1-b694cc41d6d3e07a7d1289df69b5a5d42fe783ab",0,48],[4,"w-doc-0","3-7be36fa40b7b74399b78eab88ddcbaf83eabf51a",0,144],[5,"w-doc-1","2-f6bcb3f82cc5ea93c8d1bbfbbc2b9c479eb998bd",1,2]]"#
        )
        let request = try ChangesRequest(properties: props([("Profile", "changes")]), body: body)
        #expect(request.rows.count == 3)
        #expect(request.rows[0].sequence == 1)
        #expect(request.rows[0].docID == "passive-doc-0")
        #expect(request.rows[0].revision.revisionID?.generation == 1)
        #expect(request.rows[0].flags == [])
        #expect(request.rows[0].bodySize == 48)
        #expect(request.rows[2].flags == .deleted)
        #expect(request.rows[2].flags.offersRevision)
        #expect(request.encode().body == body)
        #expect(pairs(request.encode().properties) == ["Profile=changes"])
    }

    @Test(arguments: ["[]", "null", ""])
    func caughtUpForms(body: String) throws {
        let request = try ChangesRequest(
            properties: props([("Profile", "changes"), ("collection", "1")]), body: bytes(body))
        #expect(request.isCaughtUp)
        #expect(request.collection == 1)
    }

    @Test func syncGatewayRowForms() throws {
        let request = try ChangesRequest(
            properties: MessageProperties(),
            body: bytes(#"[[9,"doc3","3-aa11"],["12::34","doc4","1-bb22",true],[14,"doc5","2-dd44",4]]"#))
        #expect(request.rows[0].flags == [] && request.rows[0].bodySize == nil)
        #expect(request.rows[1].sequence == .string("12::34"))
        #expect(request.rows[1].flags == .deleted)
        #expect(request.rows[2].flags == .removed)
        #expect(!request.rows[2].flags.offersRevision)
        #expect(ChangeFlags(rawValue: 5).offersRevision)
        #expect(!ChangeFlags(rawValue: 2).offersRevision)
        // Re-encoded the LiteCore way: integer flags, omitted when zero without a body size.
        #expect(
            request.encode().body
                == bytes(#"[[9,"doc3","3-aa11"],["12::34","doc4","1-bb22",1],[14,"doc5","2-dd44",4]]"#))
    }

    @Test func malformedRows() {
        let context = "changes"
        expectProtocolError(
            .invalidRow(context: context, index: 0, reason: "expected [sequence, docID, revID, deleted?, bodySize?]")
        ) {
            _ = try ChangesRequest(properties: MessageProperties(), body: bytes(#"[[1,"doc"]]"#))
        }
        expectProtocolError(.invalidRow(context: context, index: 1, reason: "the docID is not a string")) {
            _ = try ChangesRequest(properties: MessageProperties(), body: bytes(#"[[1,"a","1-aa"],[2,3,"1-aa"]]"#))
        }
        expectProtocolError(.invalidRevisionID("1-ABCD", reason: "the digest must be lowercase hexadecimal")) {
            _ = try ChangesRequest(properties: MessageProperties(), body: bytes(#"[[1,"a","1-ABCD"]]"#))
        }
        expectProtocolError(.invalidRow(context: context, index: 0, reason: "the document ID is empty")) {
            _ = try ChangesRequest(properties: MessageProperties(), body: bytes(#"[[1,"","1-aa"]]"#))
        }
        expectProtocolError(.invalidBody(context: "changes body", reason: "expected a JSON array, got an object")) {
            _ = try ChangesRequest(properties: MessageProperties(), body: bytes("{}"))
        }
    }

    @Test func replyFromFixture() throws {
        let properties = props([("maxHistory", "50"), ("blobs", "true"), ("deltas", "true")])
        let reply = try ChangesReply(
            properties: properties, body: bytes(#"[["1-84cd1538ec7fb8856995d25a87e33a6f3a525464"]]"#))
        #expect(reply.capabilities == .liteCore(includingDeltas: true))
        #expect(
            reply.entries == [.send(knownAncestors: [.tree(try revID("1-84cd1538ec7fb8856995d25a87e33a6f3a525464"))])])
        #expect(reply.encode().properties == properties)

        let nothingKnown = try ChangesReply(
            properties: props([("maxHistory", "50"), ("blobs", "true")]), body: bytes("[[],[],[]]"))
        #expect(nothingKnown.entries == Array(repeating: .send(knownAncestors: []), count: 3))
        #expect(!nothingKnown.capabilities.deltas)
        #expect(nothingKnown.encode().body == bytes("[[],[],[]]"))
    }

    @Test func replyTrailingSkipsAreOmitted() throws {
        let reply = ChangesReply(entries: [.skip, .send(knownAncestors: []), .status(409), .skip, .skip])
        #expect(reply.encode().body == bytes("[0,[],409]"))
        #expect(reply.encode().properties.isEmpty)
        let decoded = try roundTrip(reply)
        #expect(decoded.entry(at: 4) == .skip)
        #expect(decoded.entry(at: 2) == .status(409))
        #expect(try ChangesReply(properties: MessageProperties(), body: bytes("[null,0]")).entries == [.skip, .skip])
        #expect(try ChangesReply(properties: MessageProperties(), body: bytes("[]")).entry(at: 0) == .skip)
        #expect(ChangesReply(entries: []).capabilities.effectiveMaxHistory == 50)
    }

    @Test func malformedReply() {
        expectProtocolError(.invalidRow(context: "changes reply", index: 0, reason: "known revisions must be strings"))
        {
            _ = try ChangesReply(properties: MessageProperties(), body: bytes("[[1]]"))
        }
        expectProtocolError(
            .invalidRow(
                context: "changes reply", index: 0,
                reason: "expected an array of revIDs, 0, null or a status, got a string")
        ) {
            _ = try ChangesReply(properties: MessageProperties(), body: bytes(#"["x"]"#))
        }
    }
}

@Suite struct ProposeChangesTests {
    @Test func requestFromFixture() throws {
        let body = bytes(
            #"[["doc-0","2-cac9fd9d06f5749f4e9e2cb4c60e99b6889958e5","1-bf308a995498433f31742cb418d5b802439065b0",144],["doc-2","1-3a5b485ddbfef426603af4b3b60a5049ffdcf7f9","",120]]"#
        )
        let properties = props([("Profile", "proposeChanges"), ("conflictIncludesRev", "true")])
        let request = try ProposeChangesRequest(properties: properties, body: body)
        #expect(request.conflictIncludesRev)
        #expect(request.rows[0].remoteRevision == .tree(try revID("1-bf308a995498433f31742cb418d5b802439065b0")))
        #expect(request.rows[1].remoteRevision == nil)
        #expect(request.rows[1].bodySize == 120)
        #expect(request.encode().properties == properties)
        #expect(request.encode().body == body)
    }

    @Test func shortRowsAndCaughtUp() throws {
        let request = try ProposeChangesRequest(
            properties: MessageProperties(), body: bytes(#"[["doc1","1-0f1e"],["doc2","2-aa",null]]"#))
        #expect(request.rows.map(\.remoteRevision) == [nil, nil])
        #expect(try ProposeChangesRequest(properties: props([("collection", "0")]), body: bytes("[]")).isCaughtUp)
        expectProtocolError(
            .invalidRow(context: "proposeChanges", index: 0, reason: "the remote revID is not a string")
        ) {
            _ = try ProposeChangesRequest(properties: MessageProperties(), body: bytes(#"[["d","1-aa",5]]"#))
        }
    }

    @Test func conflictReplyFromFixture() throws {
        let body = bytes(#"[{"status":409,"rev":"2-7b2e31c50a21525523ab3fc9d65ae89610486f39"}]"#)
        let reply = try ProposeChangesReply(
            properties: props([("maxHistory", "50"), ("blobs", "true"), ("deltas", "true")]), body: body)
        #expect(
            reply.statuses == [
                .conflict(currentRevision: .tree(try revID("2-7b2e31c50a21525523ab3fc9d65ae89610486f39")))
            ])
        #expect(reply.encode().body == body)
    }

    @Test func emptyReplyMeansSendEverything() throws {
        let reply = try ProposeChangesReply(properties: MessageProperties(), body: bytes("[]"))
        #expect(reply.status(at: 0) == .accepted)
        #expect(reply.status(at: 7) == .accepted)
    }

    @Test func statusesRoundTripWithTrailingZerosOmitted() throws {
        let reply = ProposeChangesReply(
            statuses: [.alreadyKnown, .conflict(currentRevision: nil), .failed(500), .accepted, .accepted],
            capabilities: .liteCore(includingDeltas: false))
        #expect(reply.encode().body == bytes("[304,409,500]"))
        let decoded = try roundTrip(reply)
        #expect(decoded.statuses == [.alreadyKnown, .conflict(currentRevision: nil), .failed(500)])
        #expect(pairs(reply.encode().properties) == ["maxHistory=50", "blobs=true"])
        expectProtocolError(
            .invalidRow(context: "proposeChanges reply", index: 0, reason: "the object has no integer 'status'")
        ) {
            _ = try ProposeChangesReply(properties: MessageProperties(), body: bytes(#"[{"rev":"1-aa"}]"#))
        }
    }
}
