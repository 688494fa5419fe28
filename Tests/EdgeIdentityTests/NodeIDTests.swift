import EdgeIdentity
import Foundation
import Testing

@Suite("Node ID")
struct NodeIDTests {
    private func temporaryDataDirectory() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("node-id-\(UUID().uuidString)/data").path
    }

    @Test("is generated once, stored as one canonical line with mode 0644, and read back unchanged")
    func generatedAndKept() throws {
        let directory = temporaryDataDirectory()
        defer { try? FileManager.default.removeItem(atPath: (directory as NSString).deletingLastPathComponent) }
        let first = try NodeID.loadOrCreate(dataDirectory: directory)
        let path = NodeID.filePath(dataDirectory: directory)
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "\(first)\n")
        #expect(first.description == first.description.lowercased())
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o644)
        #expect(try NodeID.loadOrCreate(dataDirectory: directory) == first)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.contains(".tmp-") }
        #expect(leftovers.isEmpty)
    }

    @Test("a corrupt file stops start-up with a clear error and is left as it is")
    func corruptFileIsAnError() throws {
        let directory = temporaryDataDirectory()
        defer { try? FileManager.default.removeItem(atPath: (directory as NSString).deletingLastPathComponent) }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let path = NodeID.filePath(dataDirectory: directory)
        for content in ["not-a-uuid\n", "6F1C2A4E-8D1B-4A3C-9E57-0B2D4C6E8F10\n", ""] {
            try content.write(toFile: path, atomically: true, encoding: .utf8)
            #expect(throws: NodeIDError.corrupt(path: path)) { try NodeID.loadOrCreate(dataDirectory: directory) }
            #expect(try String(contentsOfFile: path, encoding: .utf8) == content)
        }
        #expect("\(NodeIDError.corrupt(path: path))".contains(path))
    }

    @Test("an unreadable file stops start-up instead of being replaced")
    func unreadableFileIsAnError() throws {
        let directory = temporaryDataDirectory()
        defer { try? FileManager.default.removeItem(atPath: (directory as NSString).deletingLastPathComponent) }
        // A directory where the file should be cannot be read as one, even by root.
        try FileManager.default.createDirectory(
            atPath: NodeID.filePath(dataDirectory: directory), withIntermediateDirectories: true)
        #expect(throws: NodeIDError.self) { try NodeID.loadOrCreate(dataDirectory: directory) }
    }
}
