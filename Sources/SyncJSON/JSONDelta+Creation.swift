extension JSONDelta {
    /// A delta that `apply(delta:to:)` turns from `old` into `new`: `{}` when nothing changed in an
    /// object or array, otherwise the smaller of an incremental patch and a plain replacement.
    package static func makeDelta(from old: JSONValue, to new: JSONValue) -> JSONValue {
        if let delta = difference(from: old, to: new) {
            return delta
        }
        switch old {
        case .object, .array: return .object(JSONObject())
        default: return replacement(new)
        }
    }

    /// `nil` when the values are equal.
    static func difference(from old: JSONValue, to new: JSONValue) -> JSONValue? {
        guard old != new else { return nil }
        let patch: JSONValue?
        switch (old, new) {
        case (.object(let oldObject), .object(let newObject)):
            patch = .object(objectDifference(from: oldObject, to: newObject))
        case (.array(let oldArray), .array(let newArray)):
            patch = .object(arrayDifference(from: oldArray, to: newArray))
        case (.string(let oldString), .string(let newString)) where oldString.utf8.count >= minimumTextPatchLength:
            patch = textPatch(from: oldString, to: newString)
        default:
            patch = nil
        }
        let whole = replacement(new)
        guard let patch, patch.serialized.count < whole.serialized.count else { return whole }
        return patch
    }

    /// A value in replacement form: wrapped in a one-element array when it could be mistaken for a
    /// patch (an array or object).
    static func replacement(_ value: JSONValue) -> JSONValue {
        switch value {
        case .array, .object: .array([value])
        default: value
        }
    }

    private static func objectDifference(from old: JSONObject, to new: JSONObject) -> JSONObject {
        var delta = JSONObject()
        for (key, oldValue) in old {
            if let newValue = new[key] {
                delta[key] = difference(from: oldValue, to: newValue)
            } else {
                delta[key] = .array([])
            }
        }
        for (key, newValue) in new where old[key] == nil {
            delta[key] = replacement(newValue)
        }
        return delta
    }

    private static func arrayDifference(from old: [JSONValue], to new: [JSONValue]) -> JSONObject {
        var delta = JSONObject()
        let shared = min(old.count, new.count)
        for index in 0..<shared {
            delta[String(index)] = difference(from: old[index], to: new[index])
        }
        if old.count != new.count {
            delta["\(shared)-"] = .array(Array(new[shared...]))
        }
        return delta
    }

    /// Keeps the common prefix and suffix and replaces the middle, cutting only at character
    /// boundaries so the inserted bytes are valid UTF-8.
    private static func textPatch(from old: String, to new: String) -> JSONValue {
        let oldBytes = Array(old.utf8)
        let newBytes = Array(new.utf8)
        func isBoundary(_ bytes: [UInt8], _ index: Int) -> Bool {
            index == bytes.count || bytes[index] & 0xC0 != 0x80
        }
        var prefix = 0
        while prefix < min(oldBytes.count, newBytes.count), oldBytes[prefix] == newBytes[prefix] {
            prefix += 1
        }
        while prefix > 0, !(isBoundary(oldBytes, prefix) && isBoundary(newBytes, prefix)) {
            prefix -= 1
        }
        var suffix = 0
        while suffix < min(oldBytes.count, newBytes.count) - prefix,
            oldBytes[oldBytes.count - 1 - suffix] == newBytes[newBytes.count - 1 - suffix]
        {
            suffix += 1
        }
        while suffix > 0,
            !(isBoundary(oldBytes, oldBytes.count - suffix) && isBoundary(newBytes, newBytes.count - suffix))
        {
            suffix -= 1
        }
        var ops = ""
        if prefix > 0 { ops += "\(prefix)=" }
        let deleted = oldBytes.count - prefix - suffix
        if deleted > 0 { ops += "\(deleted)-" }
        let inserted = newBytes[prefix..<newBytes.count - suffix]
        if !inserted.isEmpty { ops += "\(inserted.count)+" + String(decoding: inserted, as: UTF8.self) + "|" }
        if suffix > 0 { ops += "\(suffix)=" }
        return [.string(ops), .integer(0), .integer(textPatchFormat)]
    }
}

/// When a pusher should send a delta instead of the full body (LiteCore's rules, spec §6).
package enum DeltaPolicy {
    /// Smaller bodies always go in full (LiteCore measures its Fleece size; this uses JSON size).
    package static let minimumBodySize = 200
    /// A delta is only worth sending when it is at most this many times the full body's size.
    package static let maximumSizeRatio = 1.2

    /// Whether the receiver accepts deltas, the base is a live revision, the body is large enough
    /// and the delta small enough.
    package static func shouldSendDelta(
        deltaSize: Int,
        bodySize: Int,
        baseIsTombstone: Bool,
        receiverAcceptsDeltas: Bool
    ) -> Bool {
        receiverAcceptsDeltas && !baseIsTombstone && bodySize >= minimumBodySize
            && Double(deltaSize) <= maximumSizeRatio * Double(bodySize)
    }
}
