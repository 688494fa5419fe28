import SyncIdentifiers
import SyncJSON
import Testing

@testable import ReplicationProtocol

@Suite struct BlobTests {
    static let fixtureDigest = "sha1-l/HKHdoEFa1TqxpJsA2C1/FQ0Z4="

    @Test(arguments: ["md5-ArH2IhJgRp/90GRqSAdAfa750BE=", "sha1-not-base64", "sha1-AAAA", ""])
    func invalidDigests(text: String) {
        expectProtocolError(.invalidDigest(text)) { _ = try BlobDigest(received: text) }
        expectProtocolError(.invalidDigest(text)) {
            _ = try BlobReference.references(in: ["file": ["@type": "blob", "digest": .string(text)]])
        }
    }

    @Test func referencesFromFixtureBody() throws {
        let body = try json(
            #"{"attachment":{"content_type":"application/octet-stream","digest":"sha1-l/HKHdoEFa1TqxpJsA2C1/FQ0Z4=","length":100000,"@type":"blob"},"index":0,"type":"cblpeer-test"}"#
        ).objectValue!
        let references = try BlobReference.references(in: body)
        #expect(
            references == [
                BlobReference(
                    location: .blob(pointer: "/attachment"), digest: try BlobDigest(Self.fixtureDigest),
                    length: 100_000,
                    contentType: "application/octet-stream")
            ])
        // application/octet-stream asks for compression even for random data (observed: `compress: true`).
        #expect(references[0].prefersCompression)
    }

    @Test func nestedBlobsAndLegacyAttachments() throws {
        let body = try json(
            #"{"gallery":[{"@type":"blob","digest":"sha1-2jmj7l5rSw0yVb/vlWAYkK/YBwk="},{"n":{"a/b":{"@type":"blob","digest":"sha1-ArH2IhJgRp/90GRqSAdAfa750BE="}}}],"_attachments":{"old.txt":{"digest":"sha1-ArH2IhJgRp/90GRqSAdAfa750BE=","length":12,"stub":true,"revpos":2}}}"#
        ).objectValue!
        let locations = try BlobReference.references(in: body).map(\.location)
        #expect(
            locations == [
                .blob(pointer: "/gallery/0"), .blob(pointer: "/gallery/1/n/a~1b"), .legacyAttachment(name: "old.txt"),
            ])
    }

    @Test func blobWithoutDigestIsRejected() throws {
        let body = try json(#"{"photo":{"@type":"blob","data":"aGk="}}"#).objectValue!
        expectProtocolError(.invalidBody(context: "document body", reason: "blob at /photo has no 'digest'")) {
            _ = try BlobReference.references(in: body)
        }
    }

    @Test(
        arguments: [
            ("application/octet-stream", nil, true),
            ("text/plain", nil, true),
            ("application/json", "gzip", false),
            ("image/jpeg", nil, false),
            ("audio/mpeg", nil, false),
            ("video/mp4", nil, false),
            ("application/zip", nil, false),
            ("application/x-gzip", nil, false),
            (nil, nil, false),
        ] as [(String?, String?, Bool)])
    func compressionRule(contentType: String?, encoding: String?, expected: Bool) throws {
        let reference = BlobReference(
            location: .blob(pointer: "/b"), digest: try BlobDigest(Self.fixtureDigest), contentType: contentType,
            encoding: encoding)
        #expect(reference.prefersCompression == expected)
    }

    @Test func standInsAreAddedForPeersWithoutBlobs() throws {
        let body = try json(
            #"{"photo":{"@type":"blob","digest":"sha1-ArH2IhJgRp/90GRqSAdAfa750BE=","length":12,"content_type":"text/plain"},"_attachments":{"legacy":{"digest":"sha1-2jmj7l5rSw0yVb/vlWAYkK/YBwk=","stub":true,"revpos":1}}}"#
        ).objectValue!
        let withStandIns = BlobReference.addingStandIns(to: body, revisionGeneration: 3)
        #expect(
            JSONValue.object(withStandIns).jsonString
                == #"{"photo":{"@type":"blob","digest":"sha1-ArH2IhJgRp/90GRqSAdAfa750BE=","length":12,"content_type":"text/plain"},"_attachments":{"legacy":{"digest":"sha1-2jmj7l5rSw0yVb/vlWAYkK/YBwk=","stub":true,"revpos":1},"blob_/photo":{"digest":"sha1-ArH2IhJgRp/90GRqSAdAfa750BE=","length":12,"content_type":"text/plain","stub":true,"revpos":3}}}"#
        )
        #expect(try BlobReference.strippingStandIns(from: withStandIns) == body)
        let plain: JSONObject = ["a": 1]
        #expect(BlobReference.addingStandIns(to: plain, revisionGeneration: 2) == plain)
    }

    @Test func strippingCopiesSyncGatewayMetadataIntoTheBlob() throws {
        let received = try json(
            #"{"g":[{"@type":"blob","digest":"sha1-ArH2IhJgRp/90GRqSAdAfa750BE="}],"_attachments":{"blob_/g/0":{"digest":"sha1-ArH2IhJgRp/90GRqSAdAfa750BE=","length":12,"revpos":2,"stub":true,"content_type":"text/plain"},"blob_1":{"digest":"sha1-2jmj7l5rSw0yVb/vlWAYkK/YBwk=","stub":true}}}"#
        ).objectValue!
        let stripped = try BlobReference.strippingStandIns(from: received)
        #expect(
            JSONValue.object(stripped).jsonString
                == #"{"g":[{"@type":"blob","digest":"sha1-ArH2IhJgRp/90GRqSAdAfa750BE=","length":12,"content_type":"text/plain"}]}"#
        )
    }

    @Test func blobMissingFromAttachmentsFailsTheRevision() throws {
        let received = try json(
            #"{"p":{"@type":"blob","digest":"sha1-ArH2IhJgRp/90GRqSAdAfa750BE="},"_attachments":{}}"#
        ).objectValue!
        expectProtocolError(
            .invalidBody(
                context: "document body",
                reason: "the blob at /p has no content: its digest is not listed in '_attachments'")
        ) {
            _ = try BlobReference.strippingStandIns(from: received)
        }
    }
}

@Suite struct AttachmentMessageTests {
    @Test func getAttachmentFromFixture() throws {
        let properties = props([
            ("Profile", "getAttachment"), ("digest", BlobTests.fixtureDigest), ("docID", "blob-doc-0"),
            ("compress", "true"),
        ])
        let request = try GetAttachmentRequest(properties: properties, body: [])
        #expect(request.digest.description == BlobTests.fixtureDigest)
        #expect(request.docID == "blob-doc-0")
        #expect(request.compress)
        #expect(request.encode().properties == properties)
        expectProtocolError(.missingProperty("digest", profile: .getAttachment)) {
            _ = try GetAttachmentRequest(properties: props([("docID", "d")]), body: [])
        }
    }

    @Test func proofMatchesAnIndependentComputation() throws {
        // SHA-1(0x14 ‖ 00 01 … 13 ‖ "Hello, blob!"), base64, computed with Python's hashlib.
        let nonce = (0..<20).map(UInt8.init)
        let request = ProveAttachmentRequest(digest: BlobDigest(of: bytes("Hello, blob!")), nonce: nonce, collection: 0)
        let reply = request.proof(for: bytes("Hello, blob!"))
        #expect(reply.proof == "sha1-9Z8YoI6cEYJ3rZlV3gTCG+NAG90=")
        #expect(reply.verifies(nonce: nonce, content: bytes("Hello, blob!")))
        #expect(!reply.verifies(nonce: nonce, content: bytes("Hello, blob?")))
        #expect(try roundTrip(request) == request)
        #expect(try roundTrip(reply) == reply)
    }

    @Test(arguments: [0, 256])
    func nonceLengthIsChecked(length: Int) throws {
        let properties = props([("Profile", "proveAttachment"), ("digest", BlobTests.fixtureDigest)])
        expectProtocolError(.invalidNonce(length: length)) {
            _ = try ProveAttachmentRequest(properties: properties, body: Array(repeating: 7, count: length))
        }
        #expect(ProtocolError.invalidNonce(length: length).reply == .blip(400, "Missing nonce"))
    }
}

@Suite struct DocumentBodyTests {
    @Test(arguments: [
        ("_id", 404), ("_rev", 404), ("_deleted", 404), ("_revisions", 404), ("_sync", 404), ("_removed", 404),
        ("_sync_x", 400), ("_purged", 400),
    ])
    func reservedPropertiesAreRejected(key: String, status: Int) {
        let body: JSONObject = [key: 1, "a": 2]
        expectProtocolError(.reservedBodyProperty(key)) { try DocumentBody.validatePushed(body) }
        #expect(
            ProtocolError.reservedBodyProperty(key).reply == .http(status, "\(key) is a reserved internal property"))
    }

    @Test func allowedSpecialPropertiesAreStripped() throws {
        let body: JSONObject = [
            "_exp": 100, "a": 1, "_attachments": ["x": ["digest": "sha1-2jmj7l5rSw0yVb/vlWAYkK/YBwk="]],
        ]
        try DocumentBody.validatePushed(body)
        #expect(DocumentBody.strippingSpecialProperties(body).keys == ["a", "_attachments"])
    }

    @Test func channelRemovalMarker() {
        #expect(DocumentBody.isChannelRemoval(["_removed": true]))
        #expect(!DocumentBody.isChannelRemoval(["removed": true]))
    }
}
