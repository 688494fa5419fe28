import SyncJSON

/// The checkpoint body the active side saves locally and on the peer (spec §5.2).
///
/// The passive side never interprets it; it stores the bytes verbatim (see `SetCheckpointRequest`).
package struct Checkpoint: Sendable, Hashable {
    /// Seconds since the epoch when written; informational.
    package var time: Int?
    /// Highest local sequence L such that every sequence ≤ L has been pushed or skipped; 0 = none.
    package var local: UInt64
    /// Completed local sequence ranges when there are holes above `local`, as (start, length) pairs.
    package var localCompleted: [Range<UInt64>]
    /// The puller's resume point exactly as the peer sent it (number or JSON string); it becomes
    /// `subChanges.since`.
    package var remote: JSONValue?

    package init(time: Int? = nil, local: UInt64 = 0, localCompleted: [Range<UInt64>] = [], remote: JSONValue? = nil) {
        self.time = time
        self.local = local
        self.localCompleted = localCompleted
        self.remote = remote
    }

    /// Reads a checkpoint body. Unknown keys (and Sync Gateway's `_id`/`_rev`) are ignored.
    package init(json body: [UInt8]) throws(ProtocolError) {
        let context = "checkpoint"
        let object = try MessageBody.object(body, context: context)
        if let time = object["time"] {
            guard let seconds = time.numberValue.flatMap({ Int(exactly: $0.doubleValue) }) else {
                throw .invalidBody(context: context, reason: "'time' must be a number of seconds")
            }
            self.time = seconds
        }
        if let local = object["local"] {
            guard let sequence = local.numberValue.flatMap({ UInt64($0.text) }) else {
                throw .invalidBody(context: context, reason: "'local' must be a non-negative integer")
            }
            self.local = sequence
        } else {
            local = 0
        }
        localCompleted = []
        if let completed = object["localCompleted"] {
            let numbers = completed.arrayValue?.compactMap { $0.numberValue.flatMap { UInt64($0.text) } }
            guard let numbers, numbers.count == completed.arrayValue?.count, numbers.count.isMultiple(of: 2) else {
                throw .invalidBody(
                    context: context,
                    reason: "'localCompleted' must be a flat array of (start, length) integer pairs"
                )
            }
            for pair in stride(from: 0, to: numbers.count, by: 2) {
                let (start, length) = (numbers[pair], numbers[pair + 1])
                guard start <= UInt64.max - length else {
                    throw .invalidBody(context: context, reason: "'localCompleted' range overflows")
                }
                localCompleted.append(start..<start + length)
            }
        }
        remote = object["remote"].flatMap { $0.isNull ? nil : $0 }
    }

    /// Compact JSON with keys in LiteCore's order `time`, `local`, `localCompleted`, `remote`,
    /// each left out until it has a value (e.g. `{"time":1795314763,"local":4,"remote":2}`).
    package var json: [UInt8] {
        var object = JSONObject()
        object["time"] = time.map(JSONValue.integer)
        if local > 0 {
            object["local"] = .number(JSONNumber(local))
        }
        if !localCompleted.isEmpty {
            object["localCompleted"] = .array(
                localCompleted.flatMap { [.number(JSONNumber($0.lowerBound)), .number(JSONNumber($0.count))] }
            )
        }
        object["remote"] = remote
        return JSONValue.object(object).serialized
    }

    /// `remote` as the `since` property of `subChanges`.
    package var since: JSONValue? { remote }
}
