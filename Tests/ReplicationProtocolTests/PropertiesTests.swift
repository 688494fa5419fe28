import Testing

@testable import ReplicationProtocol

@Suite struct PropertiesTests {
    @Test func emptyValueReadsAsAbsent() {
        // The first setCheckpoint of every CBL 3.2.4 client carried `rev` with an empty value.
        let properties = props([
            ("Profile", "setCheckpoint"), ("client", "cp-xyhcuHG5W7n44wkdFnA5V1Rmn0M="), ("rev", ""),
        ])
        #expect(properties["rev"] == nil)
        #expect(properties["client"] == "cp-xyhcuHG5W7n44wkdFnA5V1Rmn0M=")
        #expect(properties.profile == "setCheckpoint")
        #expect(properties.pairs.count == 3)
    }

    @Test(arguments: [
        ("true", true), ("TRUE", true), ("yes", true), ("YES", true), ("1", true), ("2", true), ("-1", true),
        ("false", false), ("No", false), ("0", false), ("", false), ("maybe", false),
    ])
    func liteCoreBooleans(text: String, expected: Bool) {
        #expect(PropertyBoolean.parse(text) == expected)
    }

    @Test func absentBooleanIsFalse() {
        #expect(PropertyBoolean.parse(nil) == false)
        #expect(MessageProperties().flag("continuous") == false)
    }

    @Test func booleanWritingStyles() {
        var properties = MessageProperties()
        properties.append("continuous", true, style: .literal)
        properties.append("deleted", true, style: .integer)
        properties.append("activeOnly", false, style: .literal)
        #expect(pairs(properties) == ["continuous=true", "deleted=1"])
    }

    @Test func profilesAreTheWireNames() {
        #expect(Profile(rawValue: "proposeChanges") == .proposeChanges)
        #expect(Profile(rawValue: "PING") == .ping)
        #expect(Profile(rawValue: "bogus") == nil)
        #expect(Profile.rev.isCollectionSpecific)
        #expect(!Profile.getCollections.isCollectionSpecific)
    }

    @Test func wrongProfileIsRejected() {
        expectProtocolError(.wrongProfile(expected: .getCheckpoint, actual: "setCheckpoint")) {
            _ = try GetCheckpointRequest(properties: props([("Profile", "setCheckpoint"), ("client", "x")]), body: [])
        }
    }

    @Test func invalidCollectionIndex() {
        let error = ProtocolError.invalidProperty(
            "collection", value: "-1", profile: .getCheckpoint, expected: "a non-negative decimal integer")
        expectProtocolError(error) {
            _ = try GetCheckpointRequest(properties: props([("client", "cp-1"), ("collection", "-1")]), body: [])
        }
        #expect(error.reply.domain == .http && error.reply.code == 400)
    }

    @Test func errorReplyRoundTripAndFixtureBytes() throws {
        // Observed: `Error-Domain` = `HTTP` then `Error-Code` = `404`, no body.
        let reply = try ErrorReply(properties: props([("Error-Domain", "HTTP"), ("Error-Code", "404")]), body: [])
        #expect(reply == .http(404))
        #expect(reply.isHTTPNotFound)
        #expect(pairs(reply.encode().properties) == ["Error-Domain=HTTP", "Error-Code=404"])
        let withMessage = ErrorReply.liteCore(LiteCoreErrorCode.corruptDelta, "bad delta")
        #expect(
            try ErrorReply(properties: withMessage.encode().properties, body: withMessage.encode().body) == withMessage)
        #expect(withMessage.asksForFullRevision)
    }

    @Test func errorReplyDefaultsToBLIPDomain() throws {
        let reply = try ErrorReply(properties: props([("Error-Code", "404")]), body: bytes("no handler for message"))
        #expect(reply == .noHandler)
        expectProtocolError(.invalidProperty("Error-Code", value: "x", profile: nil, expected: "a decimal integer")) {
            _ = try ErrorReply(properties: props([("Error-Code", "x")]), body: [])
        }
    }
}

@Suite struct SubprotocolTests {
    @Test func picksCBMobile3FromTheCBLOffer() {
        #expect(ReplicationSubprotocol.select(offered: "BLIP_3+CBMobile_3,BLIP_3+CBMobile_2") == .cbMobile3)
        #expect(
            ReplicationSubprotocol.offer(ReplicationSubprotocol.revisionTreeOffer)
                == "BLIP_3+CBMobile_3,BLIP_3+CBMobile_2")
        // `protocol = "auto"` offers what a Couchbase Lite 4.0 puller offers.
        #expect(
            ReplicationSubprotocol.offer(ReplicationSubprotocol.activeOffer) == "BLIP_3+CBMobile_4,BLIP_3+CBMobile_3")
    }

    @Test func clientOrderWins() {
        #expect(ReplicationSubprotocol.select(offered: "BLIP_3+CBMobile_2, BLIP_3+CBMobile_3") == .cbMobile2)
        #expect(
            ReplicationSubprotocol.select(offered: "BLIP_3+CBMobile_4, BLIP_3+CBMobile_3", supported: [.cbMobile3])
                == .cbMobile3)
    }

    @Test func severalHeaderLinesAreReadInOrder() {
        #expect(ReplicationSubprotocol.select(offered: ["BLIP_3+CBMobile_5", " BLIP_3+CBMobile_2 "]) == .cbMobile2)
    }

    @Test func nothingMatches() {
        #expect(ReplicationSubprotocol.select(offered: "BLIP_3+CBMobile_5") == nil)
        #expect(ReplicationSubprotocol.select(offered: "") == nil)
        #expect(ReplicationSubprotocol.select(offered: "BLIP_3+CBMobile_3", supported: [.cbMobile2]) == nil)
        #expect(
            ReplicationSubprotocol.mismatchMessage()
                == "I only speak BLIP_3+CBMobile_4,BLIP_3+CBMobile_3,BLIP_3+CBMobile_2 protocols")
    }

    /// Couchbase Lite 4 offers CBMobile_4 alone when it pushes and CBMobile_4 then 3 when it only pulls; 3.x offers
    /// CBMobile_3 then 2 (the fixtures' request headers). The listener gives each its first choice.
    @Test func listenerServesEachClientGenerationItsOwn() {
        let served = ReplicationSubprotocol.served
        #expect(ReplicationSubprotocol.select(offered: "BLIP_3+CBMobile_4", supported: served) == .cbMobile4)
        #expect(
            ReplicationSubprotocol.select(offered: "BLIP_3+CBMobile_4,BLIP_3+CBMobile_3", supported: served)
                == .cbMobile4)
        #expect(
            ReplicationSubprotocol.select(offered: "BLIP_3+CBMobile_3,BLIP_3+CBMobile_2", supported: served)
                == .cbMobile3)
        #expect(ReplicationSubprotocol.cbMobile4.usesVersionVectors)
        #expect(!ReplicationSubprotocol.cbMobile3.usesVersionVectors)
    }

    @Test func activeSideChecksTheEcho() {
        #expect(ReplicationSubprotocol.accepted(response: "BLIP_3+CBMobile_3") == .cbMobile3)
        #expect(ReplicationSubprotocol.accepted(response: "BLIP_3+CBMobile_4") == .cbMobile4)
        #expect(ReplicationSubprotocol.accepted(response: "BLIP_3+CBMobile_2") == nil)
        #expect(ReplicationSubprotocol.accepted(response: nil) == nil)
        #expect(ReplicationSubprotocol.cbMobile3.replicationVersion == 3)
        #expect(ReplicationSubprotocol(rawValue: "chat").replicationVersion == nil)
    }
}
