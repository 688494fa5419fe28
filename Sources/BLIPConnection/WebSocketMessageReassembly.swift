import NIOCore

/// Joins a peer's WebSocket data frames into whole binary messages, each of them one BLIP frame (RFC 6455 §5.4).
struct WebSocketMessageReassembly {
    enum DataOpcode {
        case text
        case binary
        case continuation
    }

    /// The largest message; a fragmented message that grows past it fails at once rather than when it ends.
    let maxMessageSize: Int
    private var message = ByteBuffer()
    private var isFragmented = false

    init(maxMessageSize: Int) {
        self.maxMessageSize = maxMessageSize
    }

    /// The message that the frame with `data` completes; `nil` while a fragmented message is still open.
    mutating func append(
        _ opcode: DataOpcode, fin: Bool, data: ByteBuffer
    ) throws(BLIPConnectionError) -> [UInt8]? {
        switch opcode {
        case .text:
            throw .textMessageReceived
        case .binary:
            // A fragmented message's frames may not be interleaved with another message's.
            guard !isFragmented else {
                throw .unexpectedWebSocketFrame(.newMessageInsideFragmentedMessage)
            }
            message = data
        case .continuation:
            // A continuation with nothing to continue cannot be framed into any message; skipping it would leave
            // the peer waiting for an answer until a timeout.
            guard isFragmented else {
                throw .unexpectedWebSocketFrame(.continuationWithoutFirstFragment)
            }
            var data = data
            message.writeBuffer(&data)
        }
        isFragmented = !fin
        guard message.readableBytes <= maxMessageSize else {
            throw .protocolViolation(.frameTooLarge(size: message.readableBytes, limit: maxMessageSize))
        }
        guard fin else { return nil }
        defer { message = ByteBuffer() }
        return Array(message.readableBytesView)
    }
}
