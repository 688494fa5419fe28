/// The failure carried by an error reply (spec §2.10).
package struct BLIPErrorReply: Error, Sendable, Hashable, CustomStringConvertible {
    /// `BLIP` for protocol-level errors, `HTTP` for HTTP-like status codes, or an implementation's domain.
    package var domain: String
    package var code: Int
    package var message: String

    package init(domain: String, code: Int, message: String = "") {
        self.domain = domain
        self.code = code
        self.message = message
    }

    /// The reply to a request whose profile has no handler.
    package static let noHandler = BLIPErrorReply(
        domain: "BLIP", code: 404, message: "no handler for message")

    package var description: String {
        message.isEmpty ? "\(domain)/\(code)" : "\(domain)/\(code): \(message)"
    }
}

extension BLIPMessage {
    /// An error reply to this request.
    package func errorReply(_ error: BLIPErrorReply) -> BLIPMessage {
        BLIPMessage(
            kind: .error,
            number: number,
            properties: [
                "Error-Domain": error.domain,
                "Error-Code": String(error.code),
            ],
            body: Array(error.message.utf8),
            isUrgent: isUrgent
        )
    }

    /// The failure described by an error reply, or nil for other messages.
    ///
    /// A missing domain means `BLIP`; a missing or non-numeric code reads as 0.
    package var errorReply: BLIPErrorReply? {
        guard kind == .error else { return nil }
        return BLIPErrorReply(
            domain: properties["Error-Domain"] ?? "BLIP",
            code: properties["Error-Code"].flatMap { Int($0) } ?? 0,
            message: String(decoding: body, as: UTF8.self)
        )
    }
}
