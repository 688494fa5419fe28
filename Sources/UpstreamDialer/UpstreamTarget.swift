import Foundation

/// Where to dial: the WebSocket endpoint of an upstream database, `ws[s]://host[:port]/<db>/_blipsync`.
public struct UpstreamTarget: Sendable, Hashable, CustomStringConvertible {
    package let isSecure: Bool
    /// A DNS name or an IP literal, IPv6 without brackets.
    package let host: String
    public let port: Int
    /// The request target, e.g. `/inventory/_blipsync`.
    public let path: String

    public init(isSecure: Bool, host: String, port: Int, path: String) {
        self.isSecure = isSecure
        self.host = host
        self.port = port
        self.path = path
    }

    /// Parses `ws://` or `wss://` URLs; a missing port means 80 or 443.
    public init(url: String) throws(UpstreamDialError) {
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(),
            scheme == "ws" || scheme == "wss"
        else {
            throw .invalidURL(url, reason: "expected ws:// or wss://")
        }
        guard var host = components.host, !host.isEmpty else {
            throw .invalidURL(url, reason: "it names no host")
        }
        if host.hasPrefix("["), host.hasSuffix("]") {
            host = String(host.dropFirst().dropLast())
        }
        let isSecure = scheme == "wss"
        let path = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
        let query = components.percentEncodedQuery.map { "?\($0)" } ?? ""
        self.init(isSecure: isSecure, host: host, port: components.port ?? (isSecure ? 443 : 80), path: path + query)
    }

    /// The `Host` header: the port is always written, as LiteCore's HTTP client does (spec §1.2).
    var hostHeader: String {
        "\(host.contains(":") ? "[\(host)]" : host):\(port)"
    }

    public var description: String {
        "\(isSecure ? "wss" : "ws")://\(host.contains(":") ? "[\(host)]" : host):\(port)\(path)"
    }
}
