import BLIPCodec
import EdgeGatewayTestSupport
import Foundation
import Testing

/// Seeded random mutations of real frames fed to the decoder and assembler: every input must either
/// decode or throw a `BLIPProtocolError` (typed throws make any other outcome a crash).
///
/// CI runs 100 000 inputs. For a long run (`scripts/reliability/fuzz blip` runs 10 000 000):
/// `BLIP_FUZZ_ITERATIONS=1000000 swift test -c release --filter FuzzTests`
@Suite("Fuzzing the decoder")
struct FuzzTests {
    enum Mutation: CaseIterable {
        case bitFlips, truncate, splice, varintGarbage, insertBytes, overwriteBytes, flagsByte,
            trailerFlip, repeatFrame
    }

    struct Outcomes: Sendable {
        var decoded = 0
        var errors: [String: Int] = [:]
        var trailerFlipsCaught = 0
        var trailerFlips = 0
    }

    static let corpusFiles = [
        "push-oneshot.jsonl", "pull-oneshot.jsonl", "pushpull-continuous.jsonl", "conflict.jsonl",
        "collections.jsonl", "blob.jsonl",
    ]

    /// Frame sequences, one per (file, connection, direction), in wire order.
    static func corpus() throws -> [[[UInt8]]] {
        var sequences: [[[UInt8]]] = []
        for name in corpusFiles {
            let fixture = try FixtureCache.named(name)
            for connection in fixture.connections where connection["http_status"] as? Int == 101 {
                for direction in Fixture.Direction.allCases {
                    let frames = fixture.binaryFrames(conn: connection["conn"] as! Int, direction: direction)
                        .map(\.payload)
                    if !frames.isEmpty {
                        sequences.append(frames)
                    }
                }
            }
        }
        return sequences
    }

    static var iterations: Int {
        ProcessInfo.processInfo.environment["BLIP_FUZZ_ITERATIONS"].flatMap(Int.init) ?? 100_000
    }

    static var seed: UInt64 {
        ProcessInfo.processInfo.environment["BLIP_FUZZ_SEED"].flatMap(UInt64.init) ?? 0x00B1_1BF0_22ED
    }

    @Test("mutated frames decode or throw typed errors, never crash")
    func mutatedFrames() async throws {
        let sequences = try Self.corpus()
        // Minutes of work that never suspends: on the concurrency pool it would hold one of its threads (two on
        // the CI machine) from the suites running beside it.
        let outcomes = try await onOwnThread { try Self.fuzz(sequences) }
        let failures = outcomes.errors.values.reduce(0, +)
        #expect(outcomes.decoded + failures == Self.iterations)
        #expect(outcomes.decoded > 0 && failures > 0)
        // Flipping a bit of a data frame's trailer is always a CRC mismatch (ACK frames have no trailer,
        // so the flip lands on their byte count instead and is counted separately).
        #expect(outcomes.trailerFlipsCaught > outcomes.trailerFlips / 2)
        #expect(outcomes.errors["checksumMismatch"] ?? 0 > 0)
        #expect(outcomes.errors["inflateFailed"] ?? 0 > 0)
        print(
            "fuzz: \(Self.iterations) inputs, seed \(Self.seed): decoded \(outcomes.decoded), errors \(outcomes.errors.sorted { $0.key < $1.key })"
        )
    }

    static func fuzz(_ sequences: [[[UInt8]]]) throws -> Outcomes {
        let allFrames = sequences.flatMap { $0 }
        var generator = SplitMix64(seed: Self.seed)
        var outcomes = Outcomes()
        for _ in 0..<Self.iterations {
            let sequence = sequences.randomElement(using: &generator)!
            let target = Int.random(in: 0..<sequence.count, using: &generator)
            let mutation = Mutation.allCases.randomElement(using: &generator)!
            let mutated = Self.mutate(
                sequence[target], with: mutation, donor: allFrames.randomElement(using: &generator)!,
                using: &generator)
            let decoder = BLIPFrameDecoder(maxFrameSize: 1 << 20, maxInflatedFrameSize: 1 << 20)
            var assembler = MessageAssembler(maxMessageSize: 4 << 20)
            for number in 1...64 {
                assembler.expectReply(to: UInt64(number))
            }
            for frame in sequence[..<target] {
                _ = try Self.feed(frame, decoder: decoder, assembler: &assembler)
            }
            var inputs = [mutated]
            if mutation == .repeatFrame {
                inputs.append(mutated)
            }
            inputs += sequence[(target + 1)...].prefix(2)
            do throws(BLIPProtocolError) {
                for input in inputs {
                    try Self.feed(input, decoder: decoder, assembler: &assembler)
                }
                outcomes.decoded += 1
            } catch {
                outcomes.errors[Self.category(error), default: 0] += 1
                if mutation == .trailerFlip, case .checksumMismatch = error {
                    outcomes.trailerFlipsCaught += 1
                }
            }
            if mutation == .trailerFlip {
                outcomes.trailerFlips += 1
            }
        }
        return outcomes
    }

    static func feed(_ frame: [UInt8], decoder: BLIPFrameDecoder, assembler: inout MessageAssembler)
        throws(BLIPProtocolError)
    {
        if case .data(let data) = try decoder.decode(frame) {
            _ = try assembler.receive(data)
        }
    }

    static func mutate(
        _ frame: [UInt8], with mutation: Mutation, donor: [UInt8],
        using generator: inout SplitMix64
    ) -> [UInt8] {
        var bytes = frame
        switch mutation {
        case .bitFlips:
            for _ in 0..<Int.random(in: 1...8, using: &generator) {
                let index = Int.random(in: 0..<bytes.count, using: &generator)
                bytes[index] ^= 1 << UInt8.random(in: 0...7, using: &generator)
            }
        case .truncate:
            bytes.removeLast(Int.random(in: 1...bytes.count, using: &generator))
        case .splice:
            let cut = Int.random(in: 0...bytes.count, using: &generator)
            let donorCut = Int.random(in: 0...donor.count, using: &generator)
            bytes = Array(bytes[..<cut] + donor[donorCut...])
        case .varintGarbage:
            let garbage = (0..<Int.random(in: 1...12, using: &generator)).map { _ in
                UInt8.random(in: 0...255, using: &generator) | (Bool.random(using: &generator) ? 0x80 : 0)
            }
            let replaced = Int.random(in: 0...min(3, bytes.count), using: &generator)
            bytes.replaceSubrange(0..<replaced, with: garbage)
        case .insertBytes:
            let index = Int.random(in: 0...bytes.count, using: &generator)
            bytes.insert(
                contentsOf: (0..<Int.random(in: 1...16, using: &generator)).map { _ in
                    UInt8.random(in: 0...255, using: &generator)
                }, at: index)
        case .overwriteBytes:
            let start = Int.random(in: 0..<bytes.count, using: &generator)
            for index in start..<min(bytes.count, start + Int.random(in: 1...16, using: &generator)) {
                bytes[index] = UInt8.random(in: 0...255, using: &generator)
            }
        case .flagsByte:
            var index = 0
            if (try? Varint.read(from: bytes, at: &index)) != nil, index < bytes.count {
                bytes[index] = UInt8.random(in: 0...0x7F, using: &generator)
            }
        case .trailerFlip:
            bytes[bytes.count - 1 - Int.random(in: 0..<min(4, bytes.count), using: &generator)] ^=
                1 << UInt8.random(in: 0...7, using: &generator)
        case .repeatFrame:
            break
        }
        return bytes
    }

    static func category(_ error: BLIPProtocolError) -> String {
        switch error {
        case .badVarint: "badVarint"
        case .emptyFrame: "emptyFrame"
        case .truncatedFrame: "truncatedFrame"
        case .invalidFlags: "invalidFlags"
        case .unknownFrameType: "unknownFrameType"
        case .trailingBytesInAck: "trailingBytesInAck"
        case .frameTooLarge: "frameTooLarge"
        case .inflatedFrameTooLarge: "inflatedFrameTooLarge"
        case .checksumMismatch: "checksumMismatch"
        case .inflateFailed: "inflateFailed"
        case .messageTooLarge: "messageTooLarge"
        case .outOfOrderRequest: "outOfOrderRequest"
        case .unexpectedReply: "unexpectedReply"
        case .malformedProperties: "malformedProperties"
        case .compressionNotSupported: "compressionNotSupported"
        }
    }
}
