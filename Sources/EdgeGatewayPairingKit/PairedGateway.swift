import EdgeIdentity
import Foundation
import PairingURI

/// A gateway found through its pairing payload: where it answered, and the certificate it proved to hold, whose
/// digests are the payload's. Everything a Couchbase Lite replicator needs besides credentials.
public struct PairedGateway: Sendable, Equatable {
    /// The payload the gateway was found with; what the device keeps to find it again.
    public let payload: PairingPayload
    /// The index in `payload.addresses` of the address that answered.
    public let addressIndex: Int
    /// The replication endpoint, `wss://address:port/db`, for `URLEndpoint`.
    public let endpoint: URL
    /// The leaf certificate's DER encoding, for `ReplicatorConfiguration.pinnedServerCertificate`
    /// (`SecCertificateCreateWithData` on Apple platforms, `CertificateFactory` on Android).
    public let certificateDER: [UInt8]

    public var address: String { payload.addresses[addressIndex] }

    /// The certificate as one PEM block, for tools and platforms that take PEM.
    public var certificatePEM: String {
        TLSIdentity.pemString(derBytes: certificateDER)
    }
}
