/// A user from a listener's users file.
public struct ListenerUser: Sendable, Equatable {
    public var name: String
    public var passwordHash: PasswordHash

    public init(name: String, passwordHash: PasswordHash) {
        self.name = name
        self.passwordHash = passwordHash
    }
}
