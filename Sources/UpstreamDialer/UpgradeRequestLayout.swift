import NIOCore
import NIOHTTP1

/// The upgrade request's headers in the order and spelling Couchbase Lite's replicator sends them (spec §1.2 and
/// the recorded 3.2.4 requests): `Host`, `Authorization`, `User-Agent`, `Cookie`, any other configured header, then
/// `Connection: Upgrade`, `Upgrade: websocket`, `Sec-WebSocket-Version: 13`, `Sec-WebSocket-Key` and
/// `Sec-WebSocket-Protocol`.
///
/// HTTP calls header order meaningless and the `Connection` token case-insensitive, but LiteCore's REST server,
/// which Couchbase Edge Server and the Couchbase Lite listener are built on, compares the `Connection` value with
/// `Upgrade` byte for byte and otherwise serves the request as a plain GET, answering 405. NIO's upgrader writes
/// `Connection: upgrade`; sending exactly what Couchbase Lite sends is the only layout every peer accepts.
enum UpgradeRequestLayout {
    /// Headers that keep their value, moved to the front in this order, with this spelling.
    static let leadingNames = ["Host", "Authorization", "User-Agent", "Cookie"]

    static func arranged(_ headers: HTTPHeaders) -> HTTPHeaders {
        var remaining = headers
        var arranged = HTTPHeaders()
        for name in leadingNames {
            for value in remaining[name] {
                arranged.add(name: name, value: value)
            }
            remaining.remove(name: name)
        }
        let key = remaining.first(name: "Sec-WebSocket-Key")
        let protocols = remaining.first(name: "Sec-WebSocket-Protocol")
        for name in ["Connection", "Upgrade", "Sec-WebSocket-Version", "Sec-WebSocket-Key", "Sec-WebSocket-Protocol"] {
            remaining.remove(name: name)
        }
        for (name, value) in remaining {
            arranged.add(name: name, value: value)
        }
        arranged.add(name: "Connection", value: "Upgrade")
        arranged.add(name: "Upgrade", value: "websocket")
        arranged.add(name: "Sec-WebSocket-Version", value: "13")
        if let key {
            arranged.add(name: "Sec-WebSocket-Key", value: key)
        }
        if let protocols {
            arranged.add(name: "Sec-WebSocket-Protocol", value: protocols)
        }
        return arranged
    }
}

/// Sits between NIO's HTTP request encoder and its upgrade handler, which has added its own `Connection` and
/// `Upgrade` headers by then, and lays out the one request it sees. It leaves the pipeline once the request's end
/// has been flushed (the upgrade handler writes and flushes the end in one call, so leaving at the write would
/// drop the flush), before the connection speaks WebSocket.
final class UpgradeRequestLayoutHandler: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = HTTPClientRequestPart
    typealias OutboundOut = HTTPClientRequestPart

    private var requestEnded = false

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(var head):
            head.headers = UpgradeRequestLayout.arranged(head.headers)
            context.write(wrapOutboundOut(.head(head)), promise: promise)
        case .body:
            context.write(data, promise: promise)
        case .end:
            requestEnded = true
            context.write(data, promise: promise)
        }
    }

    func flush(context: ChannelHandlerContext) {
        context.flush()
        if requestEnded {
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
        }
    }
}
