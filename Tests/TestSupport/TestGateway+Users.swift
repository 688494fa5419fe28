import EdgeConfig
import EdgeCredentials
import Foundation
import ListenerUsersFile

extension TestGateway {
    /// A users file with alice (password "s3cret"), written once for every test that authenticates.
    package static let users = users(name: "alice", password: "s3cret")

    /// Basic authentication against a new users file that holds one user.
    package static func users(name: String, password: String) -> ListenerAuthentication {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("edge-users-\(UUID().uuidString).toml")
            .path
        try! UsersFile.write(
            [
                ListenerUser(
                    name: name,
                    passwordHash: try! PasswordHash.make(
                        password: password, parameters: .init(logRounds: 4, blockSize: 8, parallelism: 1))
                )
            ],
            to: file)
        return .basic(usersFile: file)
    }
}
