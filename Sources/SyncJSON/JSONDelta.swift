/// Fleece "JSONDelta" deltas, the body format of a `rev` carrying `deltaSrc` (spec §6).
///
/// A delta `D` applied to an old value `O`:
/// * a scalar `D` replaces `O`; `[X]` replaces it with `X` (needed when `X` is an array or object);
/// * `[]` deletes the value (inside an object);
/// * `{…}` against an object patches member by member (a missing key is an insertion);
/// * `{…}` against an array patches by decimal index, and `"N-": [tail]` replaces everything from N on;
/// * `["ops", 0, 2]` against a string is a text patch of `n=` copy, `n-` skip, `n+bytes|` insert,
///   counted in UTF-8 bytes.
package enum JSONDelta {
    /// LiteCore only emits text patches for strings at least this long.
    package static let minimumTextPatchLength = 60
    static let textPatchFormat = 2

    // MARK: Applying

    /// Applies `delta` to `base`. Throws `JSONDeltaError.corruptDelta` when the delta doesn't fit the base.
    package static func apply(delta: JSONValue, to base: JSONValue) throws(JSONDeltaError) -> JSONValue {
        guard let result = try apply(delta, to: Optional(base), path: "") else {
            throw .corruptDelta("the delta deletes the whole value")
        }
        return result
    }

    /// `nil` result = deleted; `nil` base = the key is absent.
    private static func apply(_ delta: JSONValue, to base: JSONValue?, path: String) throws(JSONDeltaError)
        -> JSONValue?
    {
        switch delta {
        case .null, .bool, .number, .string:
            return delta
        case .array(let items):
            switch items.count {
            case 0:
                return nil
            case 1:
                return items[0]
            case 3 where items[1] == .integer(0) && items[2] == .integer(textPatchFormat):
                guard let ops = items[0].stringValue, let old = base?.stringValue else {
                    throw .corruptDelta("text patch at '\(path)' needs a string patch and a string base")
                }
                return .string(try applyTextPatch(ops, to: old, path: path))
            default:
                throw .corruptDelta("unrecognized array delta of \(items.count) items at '\(path)'")
            }
        case .object(let members):
            switch base {
            case .object(let object):
                return .object(try patch(object, with: members, path: path))
            case .none:
                return .object(try patch(JSONObject(), with: members, path: path))
            case .array(let array):
                return .array(try patch(array, with: members, path: path))
            default:
                throw .corruptDelta("object delta at '\(path)' applied to \(base?.typeName ?? "nothing")")
            }
        }
    }

    private static func patch(_ object: JSONObject, with delta: JSONObject, path: String) throws(JSONDeltaError)
        -> JSONObject
    {
        var result = object
        for (key, memberDelta) in delta {
            result[key] = try apply(memberDelta, to: object[key], path: path + "/" + key)
        }
        return result
    }

    private static func patch(_ array: [JSONValue], with delta: JSONObject, path: String) throws(JSONDeltaError)
        -> [JSONValue]
    {
        var result = array
        var tail: (start: Int, elements: [JSONValue])?
        for (key, elementDelta) in delta {
            if key.hasSuffix("-"), let start = Int(key.dropLast()), start >= 0 {
                guard start <= array.count, let elements = elementDelta.arrayValue, tail == nil else {
                    throw .corruptDelta("invalid array tail '\(key)' at '\(path)' for \(array.count) elements")
                }
                tail = (start, elements)
            } else if let index = Int(key), String(index) == key, array.indices.contains(index) {
                guard let element = try apply(elementDelta, to: array[index], path: path + "/" + key) else {
                    throw .corruptDelta("array element '\(path)/\(key)' cannot be deleted by index")
                }
                result[index] = element
            } else {
                throw .corruptDelta("invalid array index '\(key)' at '\(path)' for \(array.count) elements")
            }
        }
        if let tail {
            guard !delta.keys.contains(where: { Int($0).map { $0 >= tail.start } ?? false }) else {
                throw .corruptDelta("array delta at '\(path)' patches elements its tail replaces")
            }
            result.replaceSubrange(tail.start..., with: tail.elements)
        }
        return result
    }

    private static func applyTextPatch(_ ops: String, to old: String, path: String) throws(JSONDeltaError) -> String {
        let source = Array(old.utf8)
        let patch = Array(ops.utf8)
        var output: [UInt8] = []
        var sourceIndex = 0
        var patchIndex = 0
        func corrupt(_ reason: String) -> JSONDeltaError {
            .corruptDelta("text patch at '\(path)': \(reason)")
        }
        while patchIndex < patch.count {
            var count = 0
            let digitsStart = patchIndex
            while patchIndex < patch.count, (0x30...0x39).contains(patch[patchIndex]) {
                guard count <= (Int.max - 9) / 10 else { throw corrupt("count overflows") }
                count = count * 10 + Int(patch[patchIndex] - 0x30)
                patchIndex += 1
            }
            guard patchIndex > digitsStart, patchIndex < patch.count else {
                throw corrupt("expected a count and an operation")
            }
            let operation = patch[patchIndex]
            patchIndex += 1
            switch operation {
            case UInt8(ascii: "="), UInt8(ascii: "-"):
                guard count <= source.count - sourceIndex else { throw corrupt("runs past the end of the old string") }
                if operation == UInt8(ascii: "=") {
                    output.append(contentsOf: source[sourceIndex..<sourceIndex + count])
                }
                sourceIndex += count
            case UInt8(ascii: "+"):
                guard count < patch.count - patchIndex, patch[patchIndex + count] == UInt8(ascii: "|") else {
                    throw corrupt("insertion is not followed by '|'")
                }
                output.append(contentsOf: patch[patchIndex..<patchIndex + count])
                patchIndex += count + 1
            default:
                throw corrupt("unknown operation '\(UnicodeScalar(operation))'")
            }
        }
        guard sourceIndex == source.count else { throw corrupt("does not consume the whole old string") }
        guard let result = String(validating: output, as: UTF8.self) else { throw corrupt("produces invalid UTF-8") }
        return result
    }
}

/// Why a delta cannot be applied to its base.
package enum JSONDeltaError: Error, Sendable, Equatable {
    case corruptDelta(String)
}
