/// The error domain of a BLIP `ERR` reply (spec §2.10).
package struct ErrorDomain: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    package let rawValue: String

    package init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// BLIP-level failures (400 bad request, 404 no handler, 501 handler threw …); the default domain.
    package static let blip = ErrorDomain(rawValue: "BLIP")
    /// HTTP status codes; what Sync Gateway uses for every handler error and what a passive peer should prefer.
    package static let http = ErrorDomain(rawValue: "HTTP")
    /// LiteCore-internal codes (see `LiteCoreErrorCode`).
    package static let liteCore = ErrorDomain(rawValue: "LiteCore")

    package var description: String { rawValue }
}

/// LiteCore error codes that appear on the wire (spec §2.10).
package enum LiteCoreErrorCode {
    package static let notFound = 7
    package static let conflict = 8
    package static let invalidParameter = 9
    package static let unsupported = 19
    package static let deltaBaseUnknown = 31
    package static let corruptDelta = 32
}

/// The content of an `ERR` reply: domain, code and an optional UTF-8 message body.
package struct ErrorReply: Sendable, Hashable, CustomStringConvertible {
    package static let domainKey = "Error-Domain"
    package static let codeKey = "Error-Code"

    package var domain: ErrorDomain
    package var code: Int
    package var message: String?

    package init(domain: ErrorDomain, code: Int, message: String? = nil) {
        self.domain = domain
        self.code = code
        self.message = message
    }

    package static func http(_ code: Int, _ message: String? = nil) -> ErrorReply {
        ErrorReply(domain: .http, code: code, message: message)
    }

    package static func blip(_ code: Int, _ message: String? = nil) -> ErrorReply {
        ErrorReply(domain: .blip, code: code, message: message)
    }

    package static func liteCore(_ code: Int, _ message: String? = nil) -> ErrorReply {
        ErrorReply(domain: .liteCore, code: code, message: message)
    }

    /// The reply to a request whose profile this peer does not handle (spec §3.11).
    package static let noHandler = ErrorReply.blip(404, "no handler for message")

    /// Reads an `ERR` reply. A missing domain means `BLIP` (spec §2.10).
    package init(properties: MessageProperties, body: [UInt8]) throws(ProtocolError) {
        domain = properties[Self.domainKey].map(ErrorDomain.init(rawValue:)) ?? .blip
        guard let codeText = properties[Self.codeKey] else {
            throw .missingProperty(Self.codeKey, profile: nil)
        }
        guard let code = Int(codeText) else {
            throw .invalidProperty(Self.codeKey, value: codeText, profile: nil, expected: "a decimal integer")
        }
        self.code = code
        message = body.isEmpty ? nil : String(decoding: body, as: UTF8.self)
    }

    /// Properties in the order LiteCore writes them (`Error-Domain`, then `Error-Code`) and the message as body.
    package func encode() -> (properties: MessageProperties, body: [UInt8]) {
        let properties: MessageProperties = [Self.domainKey: domain.rawValue, Self.codeKey: String(code)]
        return (properties, message.map { Array($0.utf8) } ?? [])
    }

    /// Whether this is the "not found" answer to `getCheckpoint` that means "no remote checkpoint" (spec §3.2).
    package var isHTTPNotFound: Bool { domain == .http && code == 404 }

    /// Whether a delta `rev` was refused in a way that asks for the full body instead (spec §6).
    package var asksForFullRevision: Bool {
        switch domain {
        case .http: code == 422 || code == 404
        case .liteCore: code == LiteCoreErrorCode.deltaBaseUnknown || code == LiteCoreErrorCode.corruptDelta
        default: false
        }
    }

    package var description: String {
        if let message { "\(domain)/\(code) \"\(message)\"" } else { "\(domain)/\(code)" }
    }
}
