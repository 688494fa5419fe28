import EdgeGatewayTestSupport
import Foundation
import Testing

@Suite("edge-gateway users")
struct UsersCommandTests {
    @Test("add, list, change and remove users; the file holds hashes only, mode 600")
    func lifecycle() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("users.toml").path
        let passwordFile = directory.appendingPathComponent("pw").path
        try "first-secret\n".write(toFile: passwordFile, atomically: true, encoding: .utf8)

        let added = try await EdgeGatewayExecutable.run([
            "users", "add", "alice", "--file", file, "--password-file", passwordFile,
        ])
        #expect(added.status == 0, "\(added.standardError)")
        #expect(added.standardOutput.contains("added alice"))
        let second = try await EdgeGatewayExecutable.run([
            "users", "add", "bob", "--file", file, "--password-file", passwordFile,
        ])
        #expect(second.status == 0)

        let contents = try String(contentsOfFile: file, encoding: .utf8)
        #expect(contents.contains("password_hash = \"$scrypt$ln=15,r=8,p=1$"))
        #expect(!contents.contains("first-secret"))
        let mode = try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int
        #expect(mode == 0o600)

        let listed = try await EdgeGatewayExecutable.run(["users", "list", "--file", file])
        #expect(listed.standardOutput == "alice\nbob\n")

        let changed = try await EdgeGatewayExecutable.run([
            "users", "add", "alice", "--file", file, "--password-file", passwordFile,
        ])
        #expect(changed.standardOutput.contains("changed the password of alice"))

        let removed = try await EdgeGatewayExecutable.run(["users", "remove", "bob", "--file", file])
        #expect(removed.status == 0)
        #expect(try await EdgeGatewayExecutable.run(["users", "list", "--file", file]).standardOutput == "alice\n")

        let missing = try await EdgeGatewayExecutable.run(["users", "remove", "nobody", "--file", file])
        #expect(missing.status == 1)
        #expect(missing.standardError.contains("no user named \"nobody\""))
    }

    @Test("--password-file reads a pipe (/dev/stdin) as well as a file, and names the reason when it cannot")
    func passwordFromPipe() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("users.toml").path
        let piped = try await EdgeGatewayExecutable.run(
            [
                "-c", #"printf 'piped-secret\n' | "$0" users add carol --file "$1" --password-file /dev/stdin"#,
                EdgeGatewayExecutable.url.path, file,
            ],
            executable: URL(fileURLWithPath: "/bin/sh"))
        #expect(piped.status == 0, "\(piped.standardError)")
        #expect(piped.standardOutput.contains("added carol"))

        let missing = try await EdgeGatewayExecutable.run(
            ["users", "add", "dave", "--file", file, "--password-file", directory.appendingPathComponent("none").path])
        #expect(missing.status != 0)
        #expect(missing.standardError.contains("cannot read the password file"), "\(missing.standardError)")
        #expect(missing.standardError.contains("No such file or directory"), "\(missing.standardError)")
    }

    @Test("a name with a colon is refused")
    func badName() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let outcome = try await EdgeGatewayExecutable.run([
            "users", "add", "a:b", "--file", directory.appendingPathComponent("u.toml").path,
        ])
        #expect(outcome.status != 0)
        #expect(outcome.standardError.contains("must not contain ':'"))
    }
}
