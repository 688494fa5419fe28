import SyncIdentifiers
import SyncJSON
import Testing

@testable import ReplicationProtocol

/// Builds properties from literal pairs, as a BLIP decoder would hand them over.
func props(_ pairs: [(String, String)]) -> MessageProperties {
    MessageProperties(pairs.map { (key: $0.0, value: $0.1) })
}

func bytes(_ text: String) -> [UInt8] {
    Array(text.utf8)
}

func revID(_ text: String) throws -> RevisionID {
    try RevisionID(text)
}

func json(_ text: String) throws -> JSONValue {
    try JSONValue(parsing: text)
}

/// The pairs of properties, for comparing with literals from the fixtures.
func pairs(_ properties: MessageProperties) -> [String] {
    properties.pairs.map { "\($0.key)=\($0.value)" }
}

/// Decodes an encoded message again, for round trips.
func roundTrip<Message: ReplicationMessage>(_ message: Message) throws -> Message {
    let (properties, body) = message.encode()
    return try Message(properties: properties, body: body)
}

/// Expects `body` to throw a `ProtocolError` equal to `expected`.
func expectProtocolError(_ expected: ProtocolError, _ body: () throws -> Void) {
    do {
        try body()
        Issue.record("expected \(expected)")
    } catch let error as ProtocolError {
        #expect(error == expected)
    } catch {
        Issue.record("unexpected error \(error)")
    }
}
