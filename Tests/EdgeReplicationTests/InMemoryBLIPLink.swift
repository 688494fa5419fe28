import BLIPConnection
import Synchronization

/// Two BLIP connections joined in memory: each one's frames are the other's incoming frames, in order, with no
/// socket and no WebSocket framing. A close from either side ends both directions, as a WebSocket close does,
/// and is recorded with its code.
final class InMemoryBLIPLink: Sendable {
    struct ClosedLink: Error {}

    /// One side's outgoing half: writes into the other side's incoming frames.
    struct Writer: BLIPFrameWriter {
        let link: InMemoryBLIPLink
        let isGateway: Bool

        func write(frame: [UInt8]) async throws {
            let peer = isGateway ? link.clientSink : link.gatewaySink
            guard case .enqueued = peer.yield(frame) else { throw ClosedLink() }
        }

        func close(_ code: WebSocketCloseCode, reason: String?) async throws {
            link.closes.withLock { $0.append((byGateway: isGateway, code: code, reason: reason ?? "")) }
            link.end()
        }
    }

    let gatewayIncoming: AsyncStream<[UInt8]>
    let clientIncoming: AsyncStream<[UInt8]>
    private let gatewaySink: AsyncStream<[UInt8]>.Continuation
    private let clientSink: AsyncStream<[UInt8]>.Continuation
    /// Closes in the order they happened.
    let closes = Mutex<[(byGateway: Bool, code: WebSocketCloseCode, reason: String)]>([])

    init() {
        (gatewayIncoming, gatewaySink) = AsyncStream.makeStream(of: [UInt8].self)
        (clientIncoming, clientSink) = AsyncStream.makeStream(of: [UInt8].self)
    }

    var gatewayWriter: Writer { Writer(link: self, isGateway: true) }
    var clientWriter: Writer { Writer(link: self, isGateway: false) }

    /// Ends both directions, as a dropped socket does.
    func end() {
        gatewaySink.finish()
        clientSink.finish()
    }
}
