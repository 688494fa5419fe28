import EdgeConfig
import EdgeCredentials
import EdgeGatewayTestSupport
import Foundation
import ListenerUsersFile
import Testing

/// Cheap enough for tests; the file format does not depend on the parameters.
private let quickHashing = PasswordHash.Parameters(logRounds: 4, blockSize: 8, parallelism: 1)

@Suite("Users file")
struct UsersFileTests {
    @Test func readsUsersWithTheirHashes() throws {
        let directory = try TemporaryDirectory()
        let alice = try PasswordHash.make(password: "a-pass", parameters: quickHashing)
        let bob = try PasswordHash.make(password: "b-pass", parameters: quickHashing)
        let path = try directory.write(
            "users.toml",
            "[[user]]\nname = \"alice\"\npassword_hash = \"\(alice)\"\n[[user]]\nname = \"bob\"\npassword_hash = \"\(bob)\"\n"
        )
        #expect(
            try UsersFile.read(path: path) == [
                ListenerUser(name: "alice", passwordHash: alice),
                ListenerUser(name: "bob", passwordHash: bob),
            ])
    }

    @Test func missingOrEmptyUsersFileMeansNoUsersYet() throws {
        let directory = try TemporaryDirectory()
        #expect(try UsersFile.readIfPresent(path: directory.path + "/users.toml") == nil)
        let empty = try directory.write("users.toml", "# nobody yet\n")
        #expect(try UsersFile.readIfPresent(path: empty) == [])
    }

    @Test("users.example.toml is a valid users file")
    func usersExample() throws {
        let users = try UsersFile.read(path: packageRoot.appendingPathComponent("config/users.example.toml").path)
        #expect(users.map(\.name) == ["store-app", "handheld-07"])
    }

    @Test func listenerUsersFileMissingOnlyMattersAwayFromItsDefaultPlace() throws {
        let directory = try TemporaryDirectory()
        let atDefault = directory.path + "/users.toml"
        #expect(try UsersFile.readForListener(path: atDefault, dataDirectory: directory.path) == [])
        let elsewhere = directory.path + "/config/users.toml"
        let error = try #require(throws: ConfigurationError.self) {
            try UsersFile.readForListener(path: elsewhere, dataDirectory: directory.path)
        }
        #expect(error.source == elsewhere)
        #expect(
            error.message
                == "the users file (users_file) does not exist: create it with `edge-gateway users add NAME`, or "
                + "correct users_file (without it the users file is \(directory.path)/users.toml)")
    }

    @Test func usersFileRefusesPlainPasswords() throws {
        let directory = try TemporaryDirectory()
        let users = try directory.write("users.toml", "[[user]]\nname = \"alice\"\npassword = \"a-pass\"\n")
        let error = try #require(throws: ConfigurationError.self) { try UsersFile.read(path: users) }
        #expect(error.source == users)
        #expect(error.line == 3)
        #expect(error.message.contains("plain passwords are not accepted"))
        #expect(!error.description.contains("a-pass"))
    }

    @Test func usersFileWithAMalformedHash() throws {
        let directory = try TemporaryDirectory()
        let users = try directory.write("users.toml", "[[user]]\nname = \"alice\"\npassword_hash = \"md5:abc\"\n")
        let error = try #require(throws: ConfigurationError.self) { try UsersFile.read(path: users) }
        #expect(error.keyPath == "user \"alice\".password_hash")
        #expect(error.message.hasPrefix("not an scrypt hash"))
    }

    @Test func usersFileWritesAndReadsBack() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/users.toml"
        let users = [
            ListenerUser(
                name: "carol", passwordHash: try PasswordHash.make(password: "c", parameters: quickHashing))
        ]
        try UsersFile.write(users, to: path)
        #expect(try UsersFile.read(path: path) == users)
        let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
    }

    @Test func usersFileErrorsCiteTheUsersFile() throws {
        let directory = try TemporaryDirectory()
        let users = try directory.write(
            "users.toml", "[[user]]\nname = \"alice\"\npasword_hash = \"x\"\n")
        let error = try #require(throws: ConfigurationError.self) { try UsersFile.read(path: users) }
        #expect(error.source == users)
        #expect(error.line == 3)
        #expect(error.keyPath == "user[0].pasword_hash")
        #expect(error.allowedValues == ["name", "password_hash"])
    }
}
