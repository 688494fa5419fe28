import Crypto
import EdgeConfig
import Foundation

/// HTTP Basic credentials from an `Authorization` header.
struct BasicCredentials: Sendable, Equatable {
    var user: String
    var password: String

    /// Parses `Basic <base64(user:password)>`; `nil` for anything else.
    init?(authorizationHeader header: String) {
        let parts = header.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "basic",
            let decoded = Data(base64Encoded: String(parts[1]).trimmingCharacters(in: .whitespaces)),
            let text = String(data: decoded, encoding: .utf8),
            let colon = text.firstIndex(of: ":")
        else { return nil }
        user = String(text[..<colon])
        password = String(text[text.index(after: colon)...])
    }

    /// Whether these credentials match one of `users`. Passwords are compared through their SHA-256
    /// digests in constant time, so neither their content nor their length leaks through timing.
    func matches(_ users: [ListenerUser]) -> Bool {
        guard let user = users.first(where: { $0.name == self.user }) else {
            // Compare anyway so that unknown and known user names take the same time.
            _ = Self.constantTimeEqual(password, password)
            return false
        }
        return Self.constantTimeEqual(password, user.password.value)
    }

    static func constantTimeEqual(_ lhs: String, _ rhs: String) -> Bool {
        let left = SHA256.hash(data: Data(lhs.utf8))
        let right = SHA256.hash(data: Data(rhs.utf8))
        var difference: UInt8 = 0
        for (a, b) in zip(left, right) {
            difference |= a ^ b
        }
        return difference == 0
    }
}
