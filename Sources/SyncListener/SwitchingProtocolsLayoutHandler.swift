import Foundation
import NIOCore

/// Writes the listener's `101` answer exactly as LiteCore's listener does (spec §1.3, the recorded 3.2.4 responses):
///
///     HTTP/1.1 101 Upgraded
///     Date: <IMF-fixdate>
///     Connection: Upgrade
///     Upgrade: websocket
///     Sec-WebSocket-Accept: <accept>
///     Sec-WebSocket-Protocol: <chosen>
///     Content-Length: 0
///
/// NIO's upgrader answers `Connection: upgrade` and its encoder drops `Content-Length` from every 1xx response, so
/// the head is laid out here, on the bytes the encoder produced. Clients that compare these values byte for byte,
/// as LiteCore's HTTP code does with requests, then see what they would see from a Couchbase listener.
///
/// It sits between the HTTP encoder and the socket and leaves the pipeline after the first response head is
/// flushed: a connection is upgraded by its first request or not at all.
final class SwitchingProtocolsLayoutHandler: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private var firstResponseWritten = false

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard !firstResponseWritten else {
            context.write(data, promise: promise)
            return
        }
        firstResponseWritten = true
        if let laidOut = Self.laidOut(unwrapOutboundIn(data), date: Date()) {
            context.write(wrapOutboundOut(laidOut), promise: promise)
        } else {
            context.write(data, promise: promise)
        }
    }

    /// Leaves at the flush, not at the write: a handler that leaves while it is being written to in a
    /// write-and-flush call swallows the flush.
    func flush(context: ChannelHandlerContext) {
        context.flush()
        if firstResponseWritten {
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
        }
    }

    /// The LiteCore layout of a `101` head in `bytes`, followed by whatever came after the head; `nil` for any
    /// other response, which goes out as it is.
    static func laidOut(_ bytes: ByteBuffer, date: Date) -> ByteBuffer? {
        let text = String(buffer: bytes)
        guard text.hasPrefix("HTTP/1.1 101 "), let headEnd = text.range(of: "\r\n\r\n") else { return nil }
        var accept: String?
        var subprotocol: String?
        for line in text[..<headEnd.lowerBound].split(separator: "\r\n").dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = line[..<colon].lowercased()
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            switch name {
            case "sec-websocket-accept": accept = value
            case "sec-websocket-protocol": subprotocol = value
            default: break
            }
        }
        guard let accept else { return nil }
        var head = "HTTP/1.1 101 Upgraded\r\nDate: \(httpDate(date))\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"
        head += "Sec-WebSocket-Accept: \(accept)\r\n"
        if let subprotocol {
            head += "Sec-WebSocket-Protocol: \(subprotocol)\r\n"
        }
        head += "Content-Length: 0\r\n\r\n"
        var laidOut = ByteBuffer(string: head)
        laidOut.writeSubstring(text[headEnd.upperBound...])
        return laidOut
    }

    /// RFC 9110's IMF-fixdate, e.g. `Sun, 22 Nov 2026 02:33:01 GMT`.
    static func httpDate(_ date: Date) -> String {
        var seconds = time_t(date.timeIntervalSince1970)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func twoDigits(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(days[Int(parts.tm_wday)]), \(twoDigits(parts.tm_mday)) \(months[Int(parts.tm_mon)]) "
            + "\(parts.tm_year + 1900) \(twoDigits(parts.tm_hour)):\(twoDigits(parts.tm_min)):\(twoDigits(parts.tm_sec)) GMT"
    }
}
