import Crypto
import Foundation
import NIOCore
import NIOPosix

/// A loopback server that answers one WebSocket upgrade request as scripted, then never says another word:
/// not a BLIP reply, not a pong. It stands in for upstreams that misbehave in ways our own listener never does.
package struct ScriptedUpgradeServer {
    package enum Answer: Sendable {
        /// `101` with this `Sec-WebSocket-Protocol` (none when `nil`), then silence.
        case upgrade(subprotocol: String?)
        /// A refusal with this status line and body.
        case refuse(status: String, body: String)
    }

    package static func run(answer: Answer, _ body: (_ port: Int) async throws -> Void) async throws {
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { child in
                child.eventLoop.makeCompletedFuture {
                    try child.pipeline.syncOperations.addHandler(ScriptedUpgradeHandler(answer: answer))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        do {
            guard let port = channel.localAddress?.port else { throw StrictUpgradeProxy.ProxyError.notBound }
            try await body(port)
        } catch {
            try? await channel.close()
            throw error
        }
        try await channel.close()
    }
}

private final class ScriptedUpgradeHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    let answer: ScriptedUpgradeServer.Answer
    var request = ""
    var answered = false

    init(answer: ScriptedUpgradeServer.Answer) {
        self.answer = answer
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !answered else { return }
        var buffer = unwrapInboundIn(data)
        request += buffer.readString(length: buffer.readableBytes) ?? ""
        guard request.contains("\r\n\r\n") else { return }
        answered = true
        let response: String
        switch answer {
        case .upgrade(let subprotocol):
            let key =
                request.split(separator: "\r\n")
                .first { $0.lowercased().hasPrefix("sec-websocket-key:") }
                .map { $0.dropFirst("sec-websocket-key:".count).trimmingCharacters(in: .whitespaces) } ?? ""
            let accept = Data(Insecure.SHA1.hash(data: Data((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").utf8)))
                .base64EncodedString()
            response =
                "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"
                + "Sec-WebSocket-Accept: \(accept)\r\n"
                + (subprotocol.map { "Sec-WebSocket-Protocol: \($0)\r\n" } ?? "") + "\r\n"
        case .refuse(let status, let body):
            response = "HTTP/1.1 \(status)\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
        }
        context.writeAndFlush(wrapOutboundOut(ByteBuffer(string: response)), promise: nil)
    }
}
