import EdgeCredentials
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

    /// Whether these credentials match one of `users`. An unknown name costs one scrypt derivation too,
    /// with the same parameters, so timing does not tell which names exist.
    func matches(_ users: [ListenerUser]) -> Bool {
        guard let user = users.first(where: { $0.name == self.user }) else {
            _ = try? PasswordHash.make(
                password: password, parameters: users.first?.passwordHash.parameters ?? .standard)
            return false
        }
        return user.passwordHash.verifies(password)
    }
}
