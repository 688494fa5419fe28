import SyncJSON

extension JSONDelta {
    /// Applies a delta body to a base body, both compact JSON as a `rev` carries them (spec §6); returns the new
    /// body serialized. Failures come as the protocol reports them: bad JSON as `invalidJSON`, a delta that does
    /// not fit as `corruptDelta` (HTTP 422, so that the sender sends the whole body instead).
    package static func apply(delta: [UInt8], to base: [UInt8]) throws(ProtocolError) -> [UInt8] {
        let deltaValue = try MessageBody.json(delta, context: "delta")
        let baseValue = try MessageBody.json(base, context: "delta base")
        do throws(JSONDeltaError) {
            return try apply(delta: deltaValue, to: baseValue).serialized
        } catch {
            switch error {
            case .corruptDelta(let reason): throw .corruptDelta(reason)
            }
        }
    }
}
