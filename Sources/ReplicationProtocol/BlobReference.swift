import Foundation
import SyncIdentifiers
import SyncJSON

/// A blob a document body refers to (spec §7.1): a `{"@type":"blob", "digest":…}` dict anywhere in
/// the body, or a legacy `_attachments` entry.
package struct BlobReference: Sendable, Hashable {
    package enum Location: Sendable, Hashable {
        /// A blob dict at this JSON pointer (e.g. `/photo`, `/gallery/0`).
        case blob(pointer: String)
        /// An entry of the top-level `_attachments` object.
        case legacyAttachment(name: String)
    }

    package static let typeKey = "@type"
    package static let blobType = "blob"
    package static let attachmentsKey = "_attachments"

    package var location: Location
    package var digest: BlobDigest
    package var length: Int?
    package var contentType: String?
    package var encoding: String?

    package init(
        location: Location, digest: BlobDigest, length: Int? = nil, contentType: String? = nil, encoding: String? = nil
    ) {
        self.location = location
        self.digest = digest
        self.length = length
        self.contentType = contentType
        self.encoding = encoding
    }

    /// Whether a dict is a blob reference.
    package static func isBlob(_ object: JSONObject) -> Bool {
        object[typeKey] == .string(blobType)
    }

    /// Every blob dict (depth first, in member order) and then every `_attachments` entry of `body`.
    package static func references(in body: JSONObject) throws(ProtocolError) -> [BlobReference] {
        var references: [BlobReference] = []
        for (pointer, metadata) in blobDictionaries(in: body) {
            references.append(try BlobReference(metadata: metadata, location: .blob(pointer: pointer)))
        }
        if let attachments = body[attachmentsKey] {
            guard let entries = attachments.objectValue else {
                throw .invalidBody(context: "document body", reason: "'_attachments' is not an object")
            }
            for (name, entry) in entries {
                guard let metadata = entry.objectValue else {
                    throw .invalidBody(context: "document body", reason: "attachment '\(name)' is not an object")
                }
                references.append(try BlobReference(metadata: metadata, location: .legacyAttachment(name: name)))
            }
        }
        return references
    }

    /// Whether a `getAttachment` for this blob should ask for compression (spec §3.9): LiteCore asks
    /// whenever there is a `content_type` that isn't image, audio or video, and neither it nor the
    /// `encoding` names an already-compressed format. No `content_type`, no compression.
    package var prefersCompression: Bool {
        guard let contentType = contentType?.lowercased() else { return false }
        if ["image/", "audio/", "video/"].contains(where: contentType.hasPrefix) {
            return false
        }
        let descriptions = [contentType, encoding?.lowercased() ?? ""]
        return !descriptions.contains { description in
            Self.compressedFormatMarkers.contains { description.contains($0) }
        }
    }

    /// Substrings of content types and encodings whose data is already compressed or encrypted.
    static let compressedFormatMarkers = [
        "zip", "zlib", "deflate", "compress", "bzip", "rar", "7z", "xz", "mpeg", "mp4", "encrypted", "pkcs7", "pgp",
    ]

    init(metadata: JSONObject, location: Location) throws(ProtocolError) {
        let context = "document body"
        let name: String
        switch location {
        case .blob(let pointer): name = "blob at \(pointer)"
        case .legacyAttachment(let attachment): name = "attachment '\(attachment)'"
        }
        guard let digestText = metadata["digest"]?.stringValue else {
            throw .invalidBody(context: context, reason: "\(name) has no 'digest'")
        }
        digest = try BlobDigest(received: digestText)
        if let length = metadata["length"] {
            guard let bytes = length.intValue, bytes >= 0 else {
                throw .invalidBody(context: context, reason: "\(name) has an invalid 'length'")
            }
            self.length = bytes
        }
        contentType = metadata["content_type"]?.stringValue
        encoding = metadata["encoding"]?.stringValue
        self.location = location
    }

    /// Every blob dict outside `_attachments`, depth first in member order, with its JSON pointer.
    static func blobDictionaries(in body: JSONObject) -> [(pointer: String, metadata: JSONObject)] {
        var found: [(pointer: String, metadata: JSONObject)] = []
        // The path is kept as raw tokens and only turned into a pointer for a blob, because every
        // received body is searched and almost none has one.
        var path: [String] = []
        func collect(_ value: JSONValue) {
            switch value {
            case .object(let object):
                if isBlob(object) {
                    found.append((path.map { "/" + escapePointerToken($0) }.joined(), object))
                    return
                }
                for (key, member) in object {
                    path.append(key)
                    collect(member)
                    path.removeLast()
                }
            case .array(let elements):
                for (index, element) in elements.enumerated() {
                    path.append(String(index))
                    collect(element)
                    path.removeLast()
                }
            default:
                break
            }
        }
        for (key, value) in body where key != attachmentsKey {
            path = [key]
            collect(value)
        }
        return found
    }

    /// RFC 6901: `~` → `~0`, `/` → `~1`.
    static func escapePointerToken(_ token: String) -> String {
        guard token.utf8.contains(where: { $0 == UInt8(ascii: "~") || $0 == UInt8(ascii: "/") }) else { return token }
        return token.replacingOccurrences(of: "~", with: "~0").replacingOccurrences(of: "/", with: "~1")
    }

    static func unescapePointerToken(_ token: Substring) -> String {
        String(token).replacingOccurrences(of: "~1", with: "/").replacingOccurrences(of: "~0", with: "~")
    }
}
