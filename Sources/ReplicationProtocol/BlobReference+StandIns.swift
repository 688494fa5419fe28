import SyncJSON

/// `_attachments` stand-ins for blob dicts, for peers that did not announce `blobs: true` (spec §7.2,
/// §7.3).
extension BlobReference {
    /// Stand-in names are `blob_` + the JSON pointer of the blob dict.
    package static let standInPrefix = "blob_"

    /// Adds a top-level `_attachments` entry `blob_<pointer>` for every blob dict: the blob's
    /// metadata without `@type` (and without inline `data`), plus `"stub": true` and `"revpos":
    /// <generation>`. Existing legacy entries are kept; a body without blobs is returned unchanged.
    package static func addingStandIns(to body: JSONObject, revisionGeneration: UInt32) -> JSONObject {
        let blobs = blobDictionaries(in: body)
        guard !blobs.isEmpty else { return body }
        var attachments = JSONObject()
        for (name, entry) in body[attachmentsKey]?.objectValue ?? JSONObject() where !name.hasPrefix(standInPrefix) {
            attachments[name] = entry
        }
        for (pointer, metadata) in blobs {
            var standIn = JSONObject()
            for (key, value) in metadata where key != typeKey && key != "data" {
                standIn[key] = value
            }
            standIn["stub"] = true
            standIn["revpos"] = .number(JSONNumber(revisionGeneration))
            attachments[standInPrefix + pointer] = .object(standIn)
        }
        var result = body
        result[attachmentsKey] = .object(attachments)
        return result
    }

    /// Undoes stand-ins on a received body the way LiteCore does: every blob dict's digest must be
    /// listed in `_attachments` when that exists; entries `blob_/<pointer>` that resolve to a blob
    /// dict (and CBL 2.0's `blob_<n>`) are removed after copying `digest`, `length` and
    /// `content_type` into the blob dict; genuine legacy attachments stay; an emptied
    /// `_attachments` is dropped.
    package static func strippingStandIns(from body: JSONObject) throws(ProtocolError) -> JSONObject {
        guard let attachmentsValue = body[attachmentsKey] else { return body }
        guard var attachments = attachmentsValue.objectValue else {
            throw .invalidBody(context: "document body", reason: "'_attachments' is not an object")
        }
        let listedDigests = Set(attachments.compactMap { $0.value.objectValue?["digest"]?.stringValue })
        for (pointer, metadata) in blobDictionaries(in: body) {
            guard let digest = metadata["digest"]?.stringValue, listedDigests.contains(digest) else {
                throw .invalidBody(
                    context: "document body",
                    reason: "the blob at \(pointer) has no content: its digest is not listed in '_attachments'"
                )
            }
        }
        var result = body
        for (name, entry) in attachments where name.hasPrefix(standInPrefix) {
            let reference = name.dropFirst(standInPrefix.count)
            if reference.first == "/" {
                guard let standIn = entry.objectValue,
                    let blob = value(at: reference, in: result)?.objectValue, isBlob(blob)
                else { continue }
                var updated = blob
                for key in ["digest", "length", "content_type"] {
                    if let value = standIn[key], blob[key] != value {
                        updated[key] = value
                    }
                }
                result = replacing(at: reference, in: result, with: .object(updated))
                attachments[name] = nil
            } else if !reference.isEmpty, reference.allSatisfy({ $0.isASCII && $0.isNumber }) {
                attachments[name] = nil
            }
        }
        result[attachmentsKey] = attachments.isEmpty ? nil : .object(attachments)
        return result
    }

    private static func tokens(_ pointer: Substring) -> [String] {
        pointer.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map(unescapePointerToken)
    }

    private static func value(at pointer: Substring, in body: JSONObject) -> JSONValue? {
        var current = JSONValue.object(body)
        for token in tokens(pointer) {
            switch current {
            case .object(let object):
                guard let next = object[token] else { return nil }
                current = next
            case .array(let array):
                guard let index = Int(token), array.indices.contains(index) else { return nil }
                current = array[index]
            default:
                return nil
            }
        }
        return current
    }

    /// `body` with the value at an existing `pointer` replaced.
    private static func replacing(at pointer: Substring, in body: JSONObject, with newValue: JSONValue) -> JSONObject {
        func replace(_ value: JSONValue, _ tokens: ArraySlice<String>) -> JSONValue {
            guard let token = tokens.first else { return newValue }
            switch value {
            case .object(var object):
                if let member = object[token] {
                    object[token] = replace(member, tokens.dropFirst())
                }
                return .object(object)
            case .array(var array):
                if let index = Int(token), array.indices.contains(index) {
                    array[index] = replace(array[index], tokens.dropFirst())
                }
                return .array(array)
            default:
                return value
            }
        }
        return replace(.object(body), tokens(pointer)[...]).objectValue ?? body
    }
}
