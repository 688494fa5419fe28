import Foundation
import HexEncoding

/// A set of Couchbase Lite wire transcripts: its folder under `Fixtures` (each has a README).
enum FixtureSet: String, CaseIterable, Sendable {
    case couchbaseLite324 = "cbl-3.2.4"
    /// CBMobile_4 sessions, and three cross-version ones (its WIRE-NOTES.md says what changed).
    case couchbaseLite403 = "cbl-4.0.3"
}

/// One Couchbase Lite wire transcript (see Fixtures/cbl-3.2.4/README.md).
///
/// Immutable after loading; the JSON dictionaries it keeps are only read.
struct Fixture: @unchecked Sendable {
    enum Direction: String, CaseIterable {
        case activeToPassive = "active->passive"
        case passiveToActive = "passive->active"

        var opposite: Direction { self == .activeToPassive ? .passiveToActive : .activeToPassive }
    }

    /// One WebSocket frame line.
    struct Frame {
        var index: Int
        var conn: Int
        var direction: Direction
        var dirIndex: Int
        var opcode: Int
        var payload: [UInt8]
        /// The capture tool's own decode, for cross-checking only.
        var toolDecode: [String: Any]
    }

    struct HTTPMessage {
        var conn: Int
        var direction: Direction
        var text: String
    }

    let set: FixtureSet
    let name: String
    let header: [String: Any]
    let frames: [Frame]
    let httpMessages: [HTTPMessage]

    static func directory(_ set: FixtureSet) -> URL {
        Bundle.module.resourceURL!.appendingPathComponent("Fixtures").appendingPathComponent(set.rawValue)
    }

    static func fileNames(in set: FixtureSet) -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory(set).path)) ?? []
        return names.filter { $0.hasSuffix(".jsonl") }.sorted()
    }

    /// Every transcript of every set as `<set>/<file>`, for tests that take them all.
    static var paths: [String] {
        FixtureSet.allCases.flatMap { set in fileNames(in: set).map { "\(set.rawValue)/\($0)" } }
    }

    init(named fileName: String, in set: FixtureSet) throws {
        self.set = set
        name = fileName
        let text = try String(
            contentsOf: Self.directory(set).appendingPathComponent(fileName), encoding: .utf8)
        var lines = text.split(separator: "\n", omittingEmptySubsequences: true).makeIterator()
        guard let first = lines.next(),
            let header = try JSONSerialization.jsonObject(with: Data(first.utf8)) as? [String: Any]
        else {
            throw FixtureError.malformed(fileName, "missing header line")
        }
        self.header = header
        var frames: [Frame] = []
        var httpMessages: [HTTPMessage] = []
        for line in lines {
            guard let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                let kind = object["kind"] as? String
            else {
                throw FixtureError.malformed(fileName, "line is not an object")
            }
            let direction = (object["direction"] as? String).flatMap(Direction.init(rawValue:))
            switch kind {
            case "ws_frame":
                frames.append(
                    Frame(
                        index: object["index"] as! Int,
                        conn: object["conn"] as! Int,
                        direction: direction!,
                        dirIndex: object["dir_index"] as! Int,
                        opcode: object["opcode"] as! Int,
                        payload: try Self.bytes(hex: object["payload_hex"] as! String),
                        toolDecode: object["decoded_by_fixture_tool"] as? [String: Any] ?? [:]
                    )
                )
            case "http_request", "http_response":
                httpMessages.append(
                    HTTPMessage(
                        conn: object["conn"] as! Int, direction: direction!, text: object["text"] as! String)
                )
            default:
                throw FixtureError.malformed(fileName, "unexpected kind \(kind)")
            }
        }
        self.frames = frames
        self.httpMessages = httpMessages
    }

    var connections: [[String: Any]] { header["connections"] as? [[String: Any]] ?? [] }

    /// The binary frames of one connection in capture order (causally consistent across directions).
    func binaryFrames(conn: Int) -> [Frame] {
        frames.filter { $0.conn == conn && $0.opcode == 2 }.sorted { $0.index < $1.index }
    }

    /// The binary frames of one connection and direction in wire (`dir_index`) order.
    func binaryFrames(conn: Int, direction: Direction) -> [Frame] {
        frames.filter { $0.conn == conn && $0.direction == direction && $0.opcode == 2 }
            .sorted { $0.dirIndex < $1.dirIndex }
    }

    static func bytes(hex: String) throws -> [UInt8] {
        guard let bytes = [UInt8](hexEncoded: hex) else {
            throw FixtureError.malformed("hex", "not pairs of hex digits")
        }
        return bytes
    }
}

enum FixtureError: Error {
    case malformed(String, String)
}

/// Fixtures are parsed once per test process; blob-2mb alone is 8.5 MB of JSON.
enum FixtureCache {
    private static let loaded = Dictionary(
        uniqueKeysWithValues: FixtureSet.allCases.map { set in
            (set, Result { try Fixture.fileNames(in: set).map { try Fixture(named: $0, in: set) } })
        })

    static func all(in set: FixtureSet) throws -> [Fixture] {
        try loaded[set]!.get()
    }

    static func named(_ name: String, in set: FixtureSet = .couchbaseLite324) throws -> Fixture {
        guard let fixture = try all(in: set).first(where: { $0.name == name }) else {
            throw FixtureError.malformed(name, "no such fixture in \(set.rawValue)")
        }
        return fixture
    }

    /// The transcript at `<set>/<file>` (`Fixture.paths`).
    static func at(_ path: String) throws -> Fixture {
        let parts = path.split(separator: "/", maxSplits: 1).map(String.init)
        guard parts.count == 2, let set = FixtureSet(rawValue: parts[0]) else {
            throw FixtureError.malformed(path, "not <set>/<file>")
        }
        return try named(parts[1], in: set)
    }
}
