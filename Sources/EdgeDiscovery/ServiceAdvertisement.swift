/// One DNS-SD TXT record string: `key=value`, or a bare `key` (a boolean attribute, RFC 6763 §6.4).
package struct TXTEntry: Sendable, Hashable, CustomStringConvertible {
    package var key: String
    package var value: String?

    package init(key: String, value: String?) {
        self.key = key
        self.value = value
    }

    /// Splits a received string at its first `=`.
    package init(parsing text: String) {
        if let equals = text.firstIndex(of: "=") {
            key = String(text[..<equals])
            value = String(text[text.index(after: equals)...])
        } else {
            key = text
            value = nil
        }
    }

    package var description: String {
        value.map { "\(key)=\($0)" } ?? key
    }
}

/// A service to publish: instance name, type, port and TXT records.
package struct ServiceAdvertisement: Sendable, Equatable {
    /// The instance name wanted; a collision on the network makes the advertiser pick the next alternative.
    package var name: String
    /// Such as `_edgegateway._tcp`.
    package var type: String
    package var port: Int
    /// In the order they are published.
    package var txt: [TXTEntry]

    /// Checks what DNS imposes, so that a bad value fails here with its reason instead of inside the daemon.
    package init(name: String, type: String, port: Int, txt: [TXTEntry]) throws(DiscoveryError) {
        guard (1...63).contains(name.utf8.count), !name.utf8.contains(0) else {
            throw .invalidAdvertisement("the instance name must be 1-63 bytes without NUL, got \"\(name)\"")
        }
        guard (1...65535).contains(port) else {
            throw .invalidAdvertisement("the port must be 1-65535, got \(port)")
        }
        for entry in txt {
            let length = entry.description.utf8.count
            guard !entry.key.isEmpty, !entry.key.contains("="), !entry.description.utf8.contains(0) else {
                throw .invalidAdvertisement("the TXT record \"\(entry)\" needs a key without '=' or NUL")
            }
            guard length <= 255 else {
                throw .invalidAdvertisement(
                    "the TXT record \"\(entry.key)=…\" is \(length) bytes; DNS allows 255 per string")
            }
        }
        self.name = name
        self.type = type
        self.port = port
        self.txt = txt
    }
}
