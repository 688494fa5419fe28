import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// HTTP GETs to servers inside another network namespace. The test process stays in the host's namespace; each
/// request runs on a thread of its own that enters the namespace first (`setns` moves only the calling thread),
/// so the socket it opens belongs there, and the thread ends with the request.
package enum NamespacedHTTP {
    /// glibc's setns(2); its declaration needs _GNU_SOURCE, which the Glibc module is not built with.
    private static let enterNetworkNamespace: @convention(c) (Int32, Int32) -> Int32 = {
        guard let symbol = dlsym(dlopen(nil, RTLD_NOW), "setns") else { fatalError("glibc has no setns") }
        return unsafeBitCast(symbol, to: (@convention(c) (Int32, Int32) -> Int32).self)
    }()
    /// CLONE_NEWNET of <sched.h>.
    private static let cloneNewNet: Int32 = 0x4000_0000

    package static func get(namespace: String, port: Int, path: String) async throws -> (status: Int, body: String) {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread {
                continuation.resume(with: Result { try blockingGet(namespace: namespace, port: port, path: path) })
            }
            thread.start()
        }
    }

    private static func blockingGet(namespace: String, port: Int, path: String) throws -> (status: Int, body: String) {
        let namespaceFile = open("/var/run/netns/\(namespace)", O_RDONLY)
        guard namespaceFile >= 0 else { throw HarnessFailure("cannot open namespace \(namespace)") }
        defer { close(namespaceFile) }
        guard enterNetworkNamespace(namespaceFile, cloneNewNet) == 0 else {
            throw HarnessFailure("setns into \(namespace): \(String(cString: strerror(errno)))")
        }
        let socketDescriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socketDescriptor >= 0 else { throw HarnessFailure("socket failed") }
        defer { close(socketDescriptor) }
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(socketDescriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(socketDescriptor, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(socketDescriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            throw HarnessFailure(
                "connect to 127.0.0.1:\(port) in \(namespace): \(String(cString: strerror(errno)))")
        }
        let request = Array("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".utf8)
        guard write(socketDescriptor, request, request.count) == request.count else {
            throw HarnessFailure("cannot send the request")
        }
        var response: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16_384)
        while true {
            let count = read(socketDescriptor, &chunk, chunk.count)
            guard count > 0 else { break }
            response.append(contentsOf: chunk[0..<count])
        }
        let text = String(decoding: response, as: UTF8.self)
        guard let headerEnd = text.range(of: "\r\n\r\n"),
            let status = text.split(separator: " ", maxSplits: 2).dropFirst().first.flatMap({ Int($0) })
        else { throw HarnessFailure("not an HTTP response: \(text.prefix(200))") }
        let head = text[..<headerEnd.lowerBound].lowercased()
        let body = String(text[headerEnd.upperBound...])
        return (status, head.contains("transfer-encoding: chunked") ? dechunked(body) : body)
    }

    private static func dechunked(_ body: String) -> String {
        var remaining = Substring(body)
        var result = ""
        while let lineEnd = remaining.range(of: "\r\n"),
            let size = Int(remaining[..<lineEnd.lowerBound].split(separator: ";").first ?? "", radix: 16), size > 0
        {
            let start = lineEnd.upperBound
            let utf8 = remaining.utf8
            guard let end = utf8.index(start, offsetBy: size, limitedBy: utf8.endIndex) else { break }
            result += String(remaining[start..<end])
            remaining = remaining[end...].dropFirst(2)
        }
        return result
    }
}
