import EdgeGatewayTestSupport
import Foundation
import Testing

@testable import EdgeConfig

/// The TOML parser (toml++ 3.4.0 in TOMLKit) fails an internal assertion, which aborts a debug build, on the
/// classes of input that fuzzing found; the configuration loader refuses them first with a syntax error.
@Suite("TOML inputs the parser cannot take")
struct TOMLParserGuardTests {
    @Test(
        "inputs on which toml++ asserts are refused with a TOML syntax error and its position",
        arguments: [
            ("[{", 1, 2), ("[#", 1, 2), ("[=", 1, 2), ("[.", 1, 2), ("[,", 1, 2), ("[[[", 1, 3), ("[ \t{", 1, 4),
            ("log_level = \"info\"\n  [ {", 2, 5), ("[[{", 1, 3),
            ("t = 1979-05-27T:", 1, 16), ("t = [1979-05-27t:]", 1, 17), ("t = { a = 1979-05-27T: }", 1, 22),
            ("a = [}", 1, 6), ("a = [1, {b = 2}, }", 1, 18), ("a = [\n  # c\n}", 3, 1),
            ("t = 1979-05-27TA:", 1, 16), ("t = 1979-05-27t.:00", 1, 16),
        ])
    func refused(input: String, line: Int, column: Int) throws {
        let error = try parseError(input)
        #expect(error.source == "test.toml")
        #expect(error.line == line && error.column == column, "\(error)")
        #expect(error.message.hasPrefix("TOML syntax error: "), "\(error.message)")
    }

    @Test("valid TOML with brackets, braces and colons in strings, comments and nested values is not refused")
    func validTOMLPasses() throws {
        let texts = [
            "a = [\n  [ {x = 1} ],\n  [\n  { y = 2 } ],\n]\n",
            "s = \"\"\"\n[{\n[#\n1979-05-27T:\n\"\"\"\n",
            "s = '''\n[=\n'''\n",
            "s = \"\\\\\"\n[t]\n",
            "# [{ and 1979-05-27T: in a comment\n[t] # [{\n",
            "[ t . u ]\n[[ \"quoted key\" ]]\n['literal']\n",
            "d = 1979-05-27T07:32:00Z\ne = 1979-05-27t07:32:00\nf = 1979-05-27\ng = 07:32:00\n",
            "1979-05-27Tx = 1\nh = 1979-05-27 07:32:00\n",
            "i = { a = [1, 2], b = { c = \"]\" } }\n[x]\n",
        ]
        for text in texts {
            #expect(throws: Never.self, "\(text)") { try TOMLParserGuard.check(text) }
        }
        #expect(throws: Never.self) { try TOMLParserGuard.check(try ConfigurationLoader.defaultConfigurationTOML()) }
    }

    static var iterations: Int {
        ProcessInfo.processInfo.environment["TOML_FUZZ_ITERATIONS"].flatMap(Int.init) ?? 100_000
    }

    static let tokens: [[UInt8]] = [
        "[", "]", "[[", "]]", "{", "}", "=", "\"", "'", "\"\"\"", "'''", "\\u", "\\U0010FFFF", "\\", ".", ",", "\n",
        "#", "1979-05-27T07:32:00Z", "1979-05-27T", "1e400", "0x", "inf", "nan", "\u{0}", "a.b.c", "= [", "= {",
        "+", "-", "_", "T", "Z", ":", "99999999999999999999", "\r\n", "\t",
    ].map { Array($0.utf8) }

    static func mutate(_ input: [UInt8], _ random: inout SplitMix64) -> [UInt8] {
        var bytes = input
        for _ in 0..<Int.random(in: 1...6, using: &random) {
            let position = bytes.isEmpty ? 0 : Int.random(in: 0..<bytes.count, using: &random)
            switch Int.random(in: 0..<6, using: &random) {
            case 0 where !bytes.isEmpty:
                bytes[position] ^= UInt8(1) << UInt8.random(in: 0..<8, using: &random)
            case 1:
                bytes.insert(contentsOf: tokens.randomElement(using: &random)!, at: position)
            case 2 where !bytes.isEmpty:
                bytes.removeSubrange(position..<min(bytes.count, position + Int.random(in: 1...40, using: &random)))
            case 3 where !bytes.isEmpty:
                let stretch = Array(
                    bytes[position..<min(bytes.count, position + Int.random(in: 1...60, using: &random))])
                for _ in 0..<Int.random(in: 1...10, using: &random) { bytes.insert(contentsOf: stretch, at: position) }
            case 4:
                let opener: [UInt8] = Bool.random(using: &random) ? Array("[".utf8) : Array("{a=".utf8)
                let count = Int.random(in: 1...3000, using: &random)
                bytes.insert(contentsOf: (0..<count).flatMap { _ in opener }, at: position)
            default:
                bytes.insert(UInt8.random(in: 0...255, using: &random), at: position)
            }
        }
        return bytes
    }

    /// `TOML_FUZZ_ITERATIONS` mutated configurations (100,000 by default) through the whole loader: each must load
    /// or throw, never take the process down. `scripts/reliability/fuzz toml` runs 10,000,000.
    @Test("mutated configurations load or fail with an error, never abort")
    func mutatedConfigurations() async throws {
        let seed =
            ProcessInfo.processInfo.environment["TOML_FUZZ_SEED"].flatMap(UInt64.init)
            ?? UInt64.random(in: 0..<1_000_000_000_000)
        print("toml fuzz: \(Self.iterations) inputs, seed \(seed)")
        let corpus = [
            Array(try ConfigurationLoader.defaultConfigurationTOML().utf8),
            Array(
                """
                [[listener]]
                name = "lan"
                interface = "127.0.0.1"
                port = 4984
                databases = ["inventory"]
                idle_timeout = "5m"

                [[upstream]]
                name = "hub"
                database = "inventory"
                url = "wss://hub.example:4984/inventory"
                """.utf8),
        ]
        let started = ContinuousClock.now
        // Minutes of work that never suspends: on the concurrency pool it would hold one of its threads (two on
        // the CI machine) from the suites running beside it.
        let (loaded, refused) = try await onOwnThread {
            var random = SplitMix64(seed: seed)
            var loaded = 0
            var refused = 0
            for _ in 0..<Self.iterations {
                let input = Self.mutate(corpus.randomElement(using: &random)!, &random)
                do {
                    _ = try parse(String(decoding: input, as: UTF8.self))
                    loaded += 1
                } catch {
                    refused += 1
                }
            }
            return (loaded, refused)
        }
        print(
            "toml fuzz: \(Self.iterations) inputs, seed \(seed), \(ContinuousClock.now - started): loaded \(loaded), refused \(refused)"
        )
        #expect(loaded + refused == Self.iterations)
    }
}
