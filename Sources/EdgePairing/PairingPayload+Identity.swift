import EdgeIdentity
import Foundation
@_exported import PairingURI

extension PairingPayload {
    /// A payload pinning `identity`'s leaf certificate (both digests).
    package init(
        identity: TLSIdentity,
        addresses: [String],
        port: Int,
        database: String,
        nodeName: String,
        nodeID: UUID
    ) throws(PairingPayloadError) {
        try self.init(
            addresses: addresses,
            port: port,
            database: database,
            certificateSHA256: identity.sha256Fingerprint.bytes,
            certificateSHA1: identity.sha1Fingerprint.bytes,
            nodeName: nodeName,
            nodeID: nodeID
        )
    }
}
