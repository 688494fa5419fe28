import Testing

@testable import EdgeCredentials

@Suite("Password hashes")
struct PasswordHashTests {
    static let quick = PasswordHash.Parameters(logRounds: 4, blockSize: 8, parallelism: 1)

    @Test("a hash verifies its own password and nothing else")
    func verifies() throws {
        let hash = try PasswordHash.make(password: "s3cret", parameters: Self.quick)
        #expect(hash.verifies("s3cret"))
        #expect(!hash.verifies("s3cret "))
        #expect(!hash.verifies(""))
    }

    @Test("the PHC string round-trips and carries its parameters")
    func roundTrip() throws {
        let hash = try PasswordHash.make(password: "pw", parameters: Self.quick)
        let text = hash.description
        #expect(text.hasPrefix("$scrypt$ln=4,r=8,p=1$"))
        #expect(!text.hasSuffix("="), "salt and hash are unpadded base64")
        let parsed = try PasswordHash(parsing: text)
        #expect(parsed == hash)
        #expect(parsed.verifies("pw"))
    }

    @Test("two hashes of one password differ by their salt")
    func salted() throws {
        let first = try PasswordHash.make(password: "same", parameters: Self.quick)
        let second = try PasswordHash.make(password: "same", parameters: Self.quick)
        #expect(first.salt != second.salt)
        #expect(first.hash != second.hash)
    }

    @Test("matches an scrypt vector computed independently (RFC 7914 parameters, hashlib)")
    func knownVector() throws {
        // python3 -c "import hashlib,base64;print(base64.b64encode(hashlib.scrypt(b'password',
        //   salt=b'NaCl', n=1024, r=8, p=16, dklen=32)).decode().rstrip('='))"
        let hash = try PasswordHash(
            parsing: "$scrypt$ln=10,r=8,p=16$TmFDbA$/bq+HJ00cgB4VucZDQHp/nxq18vII3gw53N2Y0s3MWI")
        #expect(hash.verifies("password"))
        #expect(!hash.verifies("Password"))
    }

    @Test(
        "malformed strings are refused with a reason",
        arguments: [
            ("plain-password", PasswordHash.ParseError.notScrypt),
            ("$argon2id$v=19$m=1,t=1,p=1$c2FsdA$aGFzaA", .notScrypt),
            ("$scrypt$ln=40,r=8,p=1$c2FsdA$aGFzaGhhc2hoYXNoaGFzaA", .badParameters("ln=40,r=8,p=1")),
            ("$scrypt$ln=4,r=8$c2FsdA$aGFzaGhhc2hoYXNoaGFzaA", .badParameters("ln=4,r=8")),
            ("$scrypt$ln=4,r=8,p=1$!!$aGFzaGhhc2hoYXNoaGFzaA", .badBase64("salt")),
            ("$scrypt$ln=4,r=8,p=1$c2FsdA$aGFzaA", .badBase64("hash")),
        ]
    )
    func malformed(text: String, expected: PasswordHash.ParseError) {
        #expect(throws: expected) { try PasswordHash(parsing: text) }
    }
}
