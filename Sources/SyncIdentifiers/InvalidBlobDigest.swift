/// A text that is not a blob digest. The replication protocol and the REST API answer it in their own words, as
/// they always have.
public struct InvalidBlobDigest: Error, Hashable, Sendable, CustomStringConvertible {
    public let text: String

    public var description: String { "invalid blob digest '\(text)': expected sha1-<28 base64 characters>" }
}
