import Crypto
import EdgeCredentials
import Foundation
import Synchronization

/// Basic credentials that passed their scrypt check recently, so that a REST client sending the same
/// `Authorization` header on every request pays one derivation (about 100 ms with the standard parameters)
/// per five minutes instead of one per request.
///
/// Entries are keyed on an HMAC, under a key drawn at start and never stored, of the user name, the password and
/// the user's stored hash (with its salt): a password changed or a user removed in the users file stops matching
/// at once, and the keys are no faster a way to guess a password than the scrypt hashes themselves. Only successes
/// are kept; failed and unknown-user attempts always cost a full derivation.
///
/// The lookup and the derivation are separate steps so that the listener can answer a hit at once and send only
/// real derivations through its `PasswordVerificationGate`.
final class VerifiedCredentialsCache: Sendable {
    static let capacity = 1024
    static let lifetime = Duration.seconds(300)

    private let verified = Mutex<[HashedAuthenticationCode<SHA256>: ContinuousClock.Instant]>([:])
    private let secret = SymmetricKey(size: .bits256)

    /// Whether these credentials passed `verify` within `lifetime`; costs one HMAC, never a derivation.
    func recentlyVerified(_ credentials: BasicCredentials, _ users: [ListenerUser]) -> Bool {
        guard let user = users.first(where: { $0.name == credentials.user }) else { return false }
        let key = key(credentials, user)
        let now = ContinuousClock.now
        return verified.withLock { $0[key].map { now < $0 } ?? false }
    }

    /// The full scrypt check (an unknown user costs one too); a success is remembered for `lifetime`.
    func verify(_ credentials: BasicCredentials, _ users: [ListenerUser]) -> Bool {
        guard let user = users.first(where: { $0.name == credentials.user }) else {
            return credentials.matches(users)
        }
        guard credentials.matches([user]) else { return false }
        let key = key(credentials, user)
        let now = ContinuousClock.now
        verified.withLock { entries in
            if entries.count >= Self.capacity {
                entries = entries.filter { now < $0.value }
                if entries.count >= Self.capacity { entries.removeAll() }
            }
            entries[key] = now + Self.lifetime
        }
        return true
    }

    private func key(_ credentials: BasicCredentials, _ user: ListenerUser) -> HashedAuthenticationCode<SHA256> {
        HMAC<SHA256>.authenticationCode(
            for: Data("\(user.name)\u{0}\(credentials.password)\u{0}\(user.passwordHash)".utf8), using: secret)
    }
}
