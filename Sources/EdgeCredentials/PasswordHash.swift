import Crypto
import CryptoExtras
import Foundation

/// A password stored as an scrypt hash in PHC string form: `$scrypt$ln=15,r=8,p=1$<salt>$<hash>`, with
/// unpadded standard base64 for salt and hash. scrypt is memory-hard, so a stolen users file is expensive to
/// attack; the parameters travel with each hash so that they can be raised later without breaking old entries.
package struct PasswordHash: Sendable, Equatable, CustomStringConvertible {
    package struct Parameters: Sendable, Equatable {
        /// log2 of scrypt's N (CPU and memory cost).
        package var logRounds: Int
        package var blockSize: Int
        package var parallelism: Int

        /// N = 2^15 with r = 8 takes about 32 MiB and tens of milliseconds per check: slow for an attacker,
        /// unnoticeable once per replication connection.
        package static let standard = Parameters(logRounds: 15, blockSize: 8, parallelism: 1)

        package init(logRounds: Int, blockSize: Int, parallelism: Int) {
            self.logRounds = logRounds
            self.blockSize = blockSize
            self.parallelism = parallelism
        }
    }

    package enum ParseError: Error, Equatable, CustomStringConvertible {
        case notScrypt
        case badParameters(String)
        case badBase64(String)

        package var description: String {
            switch self {
            case .notScrypt:
                "not an scrypt hash: expected $scrypt$ln=…,r=…,p=…$salt$hash (create one with `edge-gateway users add`)"
            case .badParameters(let text): "bad scrypt parameters \"\(text)\": expected ln=4…20,r=1…32,p=1…16"
            case .badBase64(let part): "the \(part) is not valid base64"
            }
        }
    }

    package let parameters: Parameters
    package let salt: [UInt8]
    package let hash: [UInt8]

    static let hashByteCount = 32
    static let saltByteCount = 16

    /// Hashes `password` with a fresh random salt.
    package static func make(password: String, parameters: Parameters = .standard) throws -> PasswordHash {
        var generator = SystemRandomNumberGenerator()
        let salt = (0..<saltByteCount).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        return PasswordHash(
            parameters: parameters,
            salt: salt,
            hash: try derive(password: password, salt: salt, parameters: parameters)
        )
    }

    package init(parsing text: String) throws(ParseError) {
        let fields = text.split(separator: "$", omittingEmptySubsequences: false)
        guard fields.count == 5, fields[0].isEmpty, fields[1] == "scrypt" else { throw .notScrypt }
        parameters = try Self.parseParameters(String(fields[2]))
        guard let salt = Self.decodeBase64(fields[3]), !salt.isEmpty else { throw .badBase64("salt") }
        guard let hash = Self.decodeBase64(fields[4]), hash.count >= 16 else { throw .badBase64("hash") }
        self.salt = salt
        self.hash = hash
    }

    init(parameters: Parameters, salt: [UInt8], hash: [UInt8]) {
        self.parameters = parameters
        self.salt = salt
        self.hash = hash
    }

    package var description: String {
        "$scrypt$ln=\(parameters.logRounds),r=\(parameters.blockSize),p=\(parameters.parallelism)$"
            + Self.encodeBase64(salt) + "$" + Self.encodeBase64(hash)
    }

    /// Whether `password` is the one this hash was made from. The comparison takes the same time wherever
    /// the hashes differ.
    package func verifies(_ password: String) -> Bool {
        guard
            let candidate = try? Self.derive(password: password, salt: salt, parameters: parameters, count: hash.count)
        else { return false }
        var difference: UInt8 = 0
        for (a, b) in zip(candidate, hash) {
            difference |= a ^ b
        }
        return difference == 0 && candidate.count == hash.count
    }

    static func derive(
        password: String,
        salt: [UInt8],
        parameters: Parameters,
        count: Int = hashByteCount
    ) throws -> [UInt8] {
        let key = try KDF.Scrypt.deriveKey(
            from: Array(password.utf8),
            salt: salt,
            outputByteCount: count,
            rounds: 1 << parameters.logRounds,
            blockSize: parameters.blockSize,
            parallelism: parameters.parallelism
        )
        return key.withUnsafeBytes { Array($0) }
    }

    private static func parseParameters(_ text: String) throws(ParseError) -> Parameters {
        var values: [String: Int] = [:]
        for pair in text.split(separator: ",") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            guard parts.count == 2, let value = Int(parts[1]) else { throw .badParameters(text) }
            values[String(parts[0])] = value
        }
        guard values.count == 3, let logRounds = values["ln"], let blockSize = values["r"],
            let parallelism = values["p"], (4...20).contains(logRounds), (1...32).contains(blockSize),
            (1...16).contains(parallelism)
        else { throw .badParameters(text) }
        return Parameters(logRounds: logRounds, blockSize: blockSize, parallelism: parallelism)
    }

    private static func encodeBase64(_ bytes: [UInt8]) -> String {
        var text = Data(bytes).base64EncodedString()
        while text.hasSuffix("=") { text.removeLast() }
        return text
    }

    private static func decodeBase64(_ text: Substring) -> [UInt8]? {
        var padded = String(text)
        while padded.count % 4 != 0 { padded += "=" }
        return Data(base64Encoded: padded).map(Array.init)
    }
}
