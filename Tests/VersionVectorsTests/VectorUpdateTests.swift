import SyncIdentifiers
import Testing

@testable import VersionVectors

/// How a vector changes when its document is written (Sync Gateway 4's `AddVersion`, `UpdateWithIncomingHLV` and
/// `Compact`).
@Suite("Vector updates")
struct VectorUpdateTests {
    static let a = "W4IpzVcVScq75WMaxJ6WUA"
    static let b = "HDL3DmjHQ6aGU6XSGrYP5g"
    static let c = "ddja2MCRTril1aX52skGJg"

    @Test("A new version from another source moves the current one to the previous versions")
    func addingFromAnotherSource() throws {
        let vector = try HybridLogicalVector("100@\(Self.a); 50@\(Self.b)")
        let updated = vector.adding(try Version("200@\(Self.c)"))
        #expect(updated.description == "200@\(Self.c); 100@\(Self.a), 50@\(Self.b)")
    }

    @Test("A new version from the current source replaces it, and merge versions become previous ones")
    func addingFromTheSameSource() throws {
        #expect(
            try HybridLogicalVector("100@\(Self.a)").adding(try Version("200@\(Self.a)")).description == "200@\(Self.a)"
        )
        let merged = try HybridLogicalVector("300@\(Self.c), 100@\(Self.a), 90@\(Self.b)")
        #expect(merged.adding(try Version("400@\(Self.a)")).description == "400@\(Self.a); 300@\(Self.c), 90@\(Self.b)")
    }

    @Test("Accepting a descendant keeps what only the stored vector knew, each source with its newest entry")
    func acceptingKeepsHistory() throws {
        let stored = try HybridLogicalVector("300@\(Self.c); 100@\(Self.a), 80@\(Self.b)")
        let incoming = try HybridLogicalVector("400@\(Self.a); 300@\(Self.c), 20@\(Self.b)")
        #expect(stored.accepting(incoming).description == "400@\(Self.a); 300@\(Self.c), 80@\(Self.b)")
    }

    @Test("The resolution captured in conflict.jsonl is accepted over the server's version")
    func capturedResolution() throws {
        // WIRE-NOTES §8: P held 18ebd084db420001@W4Ip…; the client kept its own current version and added P's.
        let server = try HybridLogicalVector("18ebd084db420001@\(Self.a)")
        let resolved = try HybridLogicalVector("18ebd0850a630000@\(Self.b); 18ebd084db420001@\(Self.a)")
        #expect(resolved.compare(to: server) == .newer)
        #expect(server.accepting(resolved) == resolved)
    }

    @Test("Pruning drops previous versions older than the cutoff, never the current or merge versions")
    func pruning() throws {
        let vector = try HybridLogicalVector("300@\(Self.c), 10@\(Self.a), 20@\(Self.b)")
        #expect(vector.pruningPreviousVersions(olderThan: 1_000) == vector)
        let withPrevious = try HybridLogicalVector("300@\(Self.c); 200@\(Self.a), 20@\(Self.b)")
        #expect(withPrevious.pruningPreviousVersions(olderThan: 100).description == "300@\(Self.c); 200@\(Self.a)")
    }

    @Test("A document's first vector over a legacy revision names it, so that its holders see the descent")
    func firstVectorAfterLegacy() throws {
        let legacy = try RevisionID("3-cccccccccccccccccccccccccccccccccccccccc")
        let vector = HybridLogicalVector(first: try Version("500@\(Self.a)"), after: legacy)
        #expect(vector.description == "500@\(Self.a); \(legacy)")
        #expect(try HybridLogicalVector(vector.description) == vector)
    }
}
