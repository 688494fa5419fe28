import NIOCore
import NIOWebSocket

extension BLIPConnection {
    /// How a WebSocket run by `run(serverSide:)` ended.
    public struct ServerWebSocketEnding: Sendable {
        /// Why the BLIP connection stopped.
        public let reason: BLIPConnectionError
        /// Whether the peer's close frame arrived; a socket that ended without one dropped under the connection.
        public let peerSentClose: Bool
    }

    /// Runs the connection as the server side of `webSocket` until the socket closes, and closes the channel.
    ///
    /// This is WSCore's `WebSocketHandler` work done in the connection's own reading task: pongs, the close
    /// handshake, and the refusal of reserved opcodes and bits. A listener keeps thousands of idle connections, and
    /// WSCore gives each an actor, a task group and stream wrappers (about 9 KB each by heaptrack) and every
    /// outgoing frame a hop onto that actor. Frame sizes and control-frame rules are checked below, by NIO's
    /// decoder.
    public nonisolated func run(
        serverSide webSocket: NIOAsyncChannel<WebSocketFrame, WebSocketFrame>, closeTimeout: Duration = .seconds(15)
    ) async throws -> ServerWebSocketEnding {
        try await webSocket.executeThenClose { inbound, outbound in
            let writer = ServerWebSocketWriter(
                outbound: outbound, channel: webSocket.channel, closeTimeout: TimeAmount(closeTimeout))
            let reason = try await run(writer: writer) { receive in
                try await self.readServerSide(inbound, writer: writer, receive: receive)
            }
            return ServerWebSocketEnding(reason: reason, peerSentClose: writer.peerSentClose)
        }
    }

    /// Feeds the peer's messages to the connection and answers its control frames until its close frame arrives
    /// or the socket ends. Once the connection has failed or closed, frames are read only for the peer's close.
    private nonisolated func readServerSide(
        _ inbound: NIOAsyncChannelInboundStream<WebSocketFrame>, writer: ServerWebSocketWriter,
        receive: ([UInt8]) async -> Bool
    ) async throws {
        var reassembly = WebSocketMessageReassembly(maxMessageSize: configuration.maxIncomingFrameSize)
        var isReceiving = true
        for try await frame in inbound {
            let opcode: WebSocketMessageReassembly.DataOpcode
            switch frame.opcode {
            case .connectionClose:
                try? await writer.answerClose(frame)
                return
            case .ping:
                if !writer.hasSentClose {
                    try? await writer.pong(frame)
                }
                continue
            case .pong:
                continue
            case .text:
                opcode = .text
            case .binary:
                opcode = .binary
            case .continuation:
                opcode = .continuation
            default:
                if isReceiving {
                    isReceiving = false
                    await fail(.unexpectedWebSocketFrame(.reservedOpcode(UInt8(webSocketOpcode: frame.opcode))))
                }
                continue
            }
            guard isReceiving else { continue }
            do throws(BLIPConnectionError) {
                guard frame.reservedBits.isEmpty else {
                    throw .unexpectedWebSocketFrame(.reservedBitsSet)
                }
                if let message = try reassembly.append(opcode, fin: frame.fin, data: frame.unmaskedData) {
                    isReceiving = await receive(message)
                }
            } catch {
                isReceiving = false
                await fail(error)
            }
        }
    }
}
