import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Bytes sent to the listener exactly as written, below any HTTP or WebSocket client that would refuse to
/// send them, and what came back. Blocking sockets, run on a thread of their own so that no test blocks the
/// concurrency pool the listener's tasks need.
package struct RawExchange: Sendable {
    /// Everything the server sent until it closed or went quiet.
    package var received: [UInt8]
    /// The server closed the connection (EOF or reset) rather than leaving it open until the read timeout.
    package var closedByServer: Bool
    /// How many of the bytes to send went out before the server closed (all of them, unless it closed early).
    package var bytesSent = 0

    /// The status of the first HTTP response, if the server answered with one.
    package var status: Int? {
        let text = String(decoding: received.prefix(64), as: UTF8.self)
        guard text.hasPrefix("HTTP/1."), text.count >= 12 else { return nil }
        let digits = text.dropFirst(9).prefix(3)
        return Int(digits)
    }

    /// The HTTP response head, up to the blank line.
    package var head: String {
        let text = String(decoding: received, as: UTF8.self)
        return text.components(separatedBy: "\r\n\r\n").first ?? text
    }

    /// The bytes after the first response head: WebSocket frames, after a 101.
    package var afterHead: [UInt8] {
        let marker: [UInt8] = Array("\r\n\r\n".utf8)
        guard received.count >= 4 else { return [] }
        for index in 0...(received.count - 4) where Array(received[index..<index + 4]) == marker {
            return Array(received[(index + 4)...])
        }
        return []
    }

    /// Connects to 127.0.0.1:`port`, sends each chunk (pausing `pause` between them), then reads until the
    /// server closes or stays silent for `quietFor`.
    package static func run(
        port: Int, chunks: [[UInt8]], pause: Duration = .zero, quietFor: Duration = .seconds(2)
    ) async throws -> RawExchange {
        try await onOwnThread { try exchange(port: port, chunks: chunks, pause: pause, quietFor: quietFor) }
    }

    /// Sends each input on a connection of its own, one after the other on one thread, half-closing after
    /// each so that the server answers what it has and closes at once.
    package static func runMany(port: Int, inputs: [[UInt8]], quietFor: Duration = .seconds(5)) async throws
        -> [RawExchange]
    {
        try await onOwnThread {
            try inputs.map { try exchange(port: port, chunks: [$0], pause: .zero, quietFor: quietFor, halfClose: true) }
        }
    }

    package struct SocketError: Error, CustomStringConvertible {
        package var call: String
        package var errno: Int32
        package var description: String { "\(call) failed: \(String(cString: strerror(errno)))" }
    }

    /// The exchange itself, blocking the calling thread: for callers that already run on a thread of their own
    /// (one that entered another network namespace, say).
    package static func exchange(
        port: Int, chunks: [[UInt8]], pause: Duration = .zero, quietFor: Duration, halfClose: Bool = false
    ) throws -> RawExchange {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw SocketError(call: "socket", errno: errno) }
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else { throw SocketError(call: "connect", errno: errno) }
        var timeout = timeval(
            tv_sec: Int(quietFor.components.seconds), tv_usec: Int(quietFor.components.attoseconds / 1_000_000_000_000))
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var closedWhileSending = false
        var bytesSent = 0
        sending: for (index, chunk) in chunks.enumerated() {
            if index > 0, pause > .zero {
                Thread.sleep(
                    forTimeInterval: Double(pause.components.seconds) + Double(pause.components.attoseconds) / 1e18)
            }
            var offset = 0
            while offset < chunk.count {
                let sent = chunk[offset...].withUnsafeBytes {
                    send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
                }
                if sent < 0 {
                    if errno == EINTR { continue }
                    // The server closed while the rest was on its way: what it answered is still to be read.
                    closedWhileSending = true
                    break sending
                }
                offset += sent
                bytesSent += sent
            }
        }
        if halfClose {
            shutdown(socket, Int32(SHUT_WR))
        }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                received += buffer[..<count]
            } else if count == 0 {
                return RawExchange(received: received, closedByServer: true, bytesSent: bytesSent)
            } else if errno == EINTR {
                continue
            } else if errno == EAGAIN || errno == EWOULDBLOCK {
                return RawExchange(received: received, closedByServer: closedWhileSending, bytesSent: bytesSent)
            } else {
                // ECONNRESET: closed with unread bytes (ours) still in its buffer.
                return RawExchange(received: received, closedByServer: true, bytesSent: bytesSent)
            }
        }
    }
}

/// A client's WebSocket frame, masked as RFC 6455 requires unless `masked` is false.
package func webSocketFrame(
    opcode: UInt8, payload: [UInt8], fin: Bool = true, rsv: UInt8 = 0, masked: Bool = true,
    declaredLength: UInt64? = nil
) -> [UInt8] {
    var frame: [UInt8] = [(fin ? 0x80 : 0) | (rsv << 4) | opcode]
    let length = declaredLength ?? UInt64(payload.count)
    let maskBit: UInt8 = masked ? 0x80 : 0
    if length < 126 {
        frame.append(maskBit | UInt8(length))
    } else if length <= 0xFFFF {
        frame.append(maskBit | 126)
        frame += [UInt8(length >> 8), UInt8(length & 0xFF)]
    } else {
        frame.append(maskBit | 127)
        frame += (0..<8).reversed().map { UInt8((length >> (UInt64($0) * 8)) & 0xFF) }
    }
    guard masked else { return frame + payload }
    let mask: [UInt8] = [0x37, 0xFA, 0x21, 0x3D]
    frame += mask
    frame += payload.enumerated().map { $0.element ^ mask[$0.offset % 4] }
    return frame
}

/// The close code of the first close frame in server bytes (server frames are unmasked), if any.
package func closeCode(inServerFrames bytes: [UInt8]) -> Int? {
    guard let close = serverFrames(bytes).first(where: { $0.opcode == 0x8 }) else { return nil }
    guard close.payload.count >= 2 else { return close.declaredLength == 0 ? 1005 : nil }
    return Int(close.payload[close.payload.startIndex]) << 8 | Int(close.payload[close.payload.startIndex + 1])
}

/// Whether the server sent a binary (BLIP) frame.
package func containsBinaryFrame(inServerFrames bytes: [UInt8]) -> Bool {
    serverFrames(bytes).contains { $0.opcode == 0x2 }
}

/// The server's (unmasked) WebSocket frames in `bytes`; a frame cut short at the end has the payload bytes that
/// arrived.
package func serverFrames(_ bytes: [UInt8]) -> [(opcode: UInt8, declaredLength: Int, payload: ArraySlice<UInt8>)] {
    var frames: [(opcode: UInt8, declaredLength: Int, payload: ArraySlice<UInt8>)] = []
    var index = 0
    while index + 2 <= bytes.count {
        let opcode = bytes[index] & 0x0F
        var length = Int(bytes[index + 1] & 0x7F)
        var headerLength = 2
        if length == 126, index + 4 <= bytes.count {
            length = Int(bytes[index + 2]) << 8 | Int(bytes[index + 3])
            headerLength = 4
        } else if length == 127, index + 10 <= bytes.count {
            length = bytes[(index + 2)..<(index + 10)].reduce(0) { $0 << 8 | Int($1) }
            headerLength = 10
        }
        let payloadStart = min(index + headerLength, bytes.count)
        frames.append((opcode, length, bytes[payloadStart..<min(payloadStart + length, bytes.count)]))
        index = payloadStart + length
    }
    return frames
}
