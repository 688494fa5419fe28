/// A text that is not a blob digest. The replication protocol and the REST API answer it in their own words, as
/// they always have.
package struct InvalidBlobDigest: Error, Hashable, Sendable, CustomStringConvertible {
    package let text: String

    package var description: String { "invalid blob digest '\(text)': expected sha1-<28 base64 characters>" }
}
