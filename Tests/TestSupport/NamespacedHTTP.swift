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
        let request = Array("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".utf8)
        let exchange: RawExchange
        do {
            exchange = try RawExchange.exchange(port: port, chunks: [request], quietFor: .seconds(5))
        } catch {
            throw HarnessFailure("GET 127.0.0.1:\(port)\(path) in \(namespace): \(error)")
        }
        guard let status = exchange.status else {
            throw HarnessFailure(
                "not an HTTP response: \(String(decoding: exchange.received.prefix(200), as: UTF8.self))")
        }
        let body = String(decoding: exchange.afterHead, as: UTF8.self)
        return (status, exchange.head.lowercased().contains("transfer-encoding: chunked") ? dechunked(body) : body)
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
