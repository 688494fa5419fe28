/// How well one part of the gateway is doing, ordered from best to worst.
package enum HealthStatus: String, Sendable, Codable, Comparable {
    case up
    /// Serving, but with a part missing or failing that sync does not need (for example discovery).
    case degraded
    case down

    private var severity: Int {
        switch self {
        case .up: 0
        case .degraded: 1
        case .down: 2
        }
    }

    package static func < (lhs: HealthStatus, rhs: HealthStatus) -> Bool {
        lhs.severity < rhs.severity
    }
}

/// A scalar in a component's health details. Kept to scalars so that a report can never carry a document.
package enum HealthValue: Sendable, Equatable, Codable {
    case string(String)
    case integer(Int)
    case boolean(Bool)
    case none

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .string(let value): try container.encode(value)
        case .integer(let value): try container.encode(value)
        case .boolean(let value): try container.encode(value)
        case .none: try container.encodeNil()
        }
    }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .none
        } else if let value = try? container.decode(Bool.self) {
            self = .boolean(value)
        } else if let value = try? container.decode(Int.self) {
            self = .integer(value)
        } else {
            self = .string(try container.decode(String.self))
        }
    }
}

extension HealthValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral {
    package init(stringLiteral value: String) { self = .string(value) }
    package init(integerLiteral value: Int) { self = .integer(value) }
    package init(booleanLiteral value: Bool) { self = .boolean(value) }
}

/// One component's entry in the health report.
package struct ComponentHealth: Sendable, Equatable, Codable {
    package enum Kind: String, Sendable, Codable {
        case store
        case listener
        case upstream
        case discovery
    }

    package var name: String
    package var kind: Kind
    package var status: HealthStatus
    /// Why the component is not `up`, in one line; nil when it is.
    package var reason: String?
    package var details: [String: HealthValue]

    package init(
        name: String,
        kind: Kind,
        status: HealthStatus,
        reason: String? = nil,
        details: [String: HealthValue] = [:]
    ) {
        self.name = name
        self.kind = kind
        self.status = status
        self.reason = reason
        self.details = details
    }
}

/// Anything that can say how it is doing. Reports must be cheap: the health endpoint is polled.
package protocol HealthReporting: Sendable {
    func healthReports() async -> [ComponentHealth]
}
