import SyncJSON
import Testing

@testable import ReplicationProtocol

/// A `rev`'s delta body applied to its base body: the JSON work is SyncJSON's (JSONDeltaTests); here, that its
/// failures reach the peer as the protocol's errors.
@Suite("Delta bodies")
struct DeltaBodyTests {
    @Test func appliesToBodyBytes() throws {
        let result = try JSONDelta.apply(delta: bytes(#"{"b":2}"#), to: bytes(#"{"a":1}"#))
        #expect(result == bytes(#"{"a":1,"b":2}"#))
    }

    @Test func corruptDeltaIsAnswered422() {
        let reason = "the delta deletes the whole value"
        expectProtocolError(.corruptDelta(reason)) {
            _ = try JSONDelta.apply(delta: bytes("[]"), to: bytes(#"{"a":1}"#))
        }
        #expect(ProtocolError.corruptDelta(reason).reply == .http(422, "the delta cannot be applied: \(reason)"))
    }

    @Test func badJSONIsInvalidJSON() {
        #expect(throws: ProtocolError.self) { try JSONDelta.apply(delta: bytes("{"), to: bytes(#"{"a":1}"#)) }
    }
}
