import Crypto
import Foundation
import SyncIdentifiers

/// `getAttachment` (spec §3.9): the receiver of a revision fetches a blob it lacks. The reply body
/// is the raw blob.
package struct GetAttachmentRequest: ReplicationRequest, Hashable {
    package static let profile = Profile.getAttachment

    package var digest: BlobDigest
    /// Required by Sync Gateway with CBMobile_3; CBL always sends it.
    package var docID: String?
    /// Ask for compressed reply frames (see `BlobReference.prefersCompression`).
    package var compress: Bool
    package var collection: Int?

    package init(digest: BlobDigest, docID: String?, compress: Bool = false, collection: Int? = nil) {
        self.digest = digest
        self.docID = docID
        self.compress = compress
        self.collection = collection
    }

    package init(properties: MessageProperties, body: [UInt8]) throws(ProtocolError) {
        try properties.expectProfile(Self.profile)
        digest = try BlobDigest(received: try properties.required("digest", in: Self.profile))
        docID = properties["docID"]
        compress = properties.flag("compress")
        collection = try properties.collectionIndex(in: Self.profile)
    }

    /// Properties in LiteCore's order: `digest`, `docID`, `compress`.
    package func encode() -> (properties: MessageProperties, body: [UInt8]) {
        var properties = Self.startProperties(collection: collection)
        properties.append("digest", digest.description)
        properties.append("docID", docID)
        properties.append("compress", compress, style: .literal)
        return (properties, [])
    }
}

/// `proveAttachment` (spec §3.10): a receiver that already has a blob makes the pusher prove it
/// has the same bytes. The reply is a `ProveAttachmentReply`.
package struct ProveAttachmentRequest: ReplicationRequest, Hashable {
    package static let profile = Profile.proveAttachment

    /// The nonce length travels as one byte, hence the upper bound.
    package static let nonceLengths = 1...255

    package var digest: BlobDigest
    /// Random bytes (Sync Gateway uses 20).
    package var nonce: [UInt8]
    package var collection: Int?

    package init(digest: BlobDigest, nonce: [UInt8], collection: Int? = nil) {
        self.digest = digest
        self.nonce = nonce
        self.collection = collection
    }

    package init(properties: MessageProperties, body: [UInt8]) throws(ProtocolError) {
        try properties.expectProfile(Self.profile)
        digest = try BlobDigest(received: try properties.required("digest", in: Self.profile))
        guard Self.nonceLengths.contains(body.count) else {
            throw .invalidNonce(length: body.count)
        }
        nonce = body
        collection = try properties.collectionIndex(in: Self.profile)
    }

    package func encode() -> (properties: MessageProperties, body: [UInt8]) {
        var properties = Self.startProperties(collection: collection)
        properties.append("digest", digest.description)
        return (properties, nonce)
    }

    /// The proof for this request's nonce over `content`.
    package func proof(for content: some DataProtocol) -> ProveAttachmentReply {
        ProveAttachmentReply(proof: Self.proof(nonce: nonce, content: content))
    }

    /// `sha1-` + base64 of SHA-1(nonce length as one byte ‖ nonce ‖ content). Base64, not the hex
    /// the protocol document claims: both LiteCore and Sync Gateway use base64.
    package static func proof(nonce: [UInt8], content: some DataProtocol) -> String {
        var hasher = Insecure.SHA1()
        hasher.update(data: [UInt8(truncatingIfNeeded: nonce.count)])
        hasher.update(data: nonce)
        hasher.update(data: content)
        return BlobDigest(sha1: hasher.finalize()).description
    }
}

/// The reply to `proveAttachment`: the ASCII proof string as body.
package struct ProveAttachmentReply: ReplicationMessage, Hashable {
    package var proof: String

    package init(proof: String) {
        self.proof = proof
    }

    package init(properties: MessageProperties, body: [UInt8]) throws(ProtocolError) {
        guard !body.isEmpty, let proof = String(validating: body, as: UTF8.self) else {
            throw .invalidBody(context: "proveAttachment reply", reason: "expected an ASCII proof")
        }
        self.proof = proof
    }

    package func encode() -> (properties: MessageProperties, body: [UInt8]) {
        (MessageProperties(), Array(proof.utf8))
    }

    /// Whether this proof matches `nonce` over `content` (the asker's check).
    package func verifies(nonce: [UInt8], content: some DataProtocol) -> Bool {
        proof == ProveAttachmentRequest.proof(nonce: nonce, content: content)
    }
}
