/// A user from a listener's users file.
public struct ListenerUser: Sendable, Equatable {
    package var name: String
    package var passwordHash: PasswordHash

    package init(name: String, passwordHash: PasswordHash) {
        self.name = name
        self.passwordHash = passwordHash
    }
}
