import Testing

@testable import EdgeReplication

@Suite("Revision windows")
struct RevisionWindowTests {
    @Test("Small bodies share one window; large ones are split at the byte limit")
    func grouping() {
        let limit = RevisionWindow.maxBytesAwaitingReply
        #expect(RevisionWindow.groups(Array(repeating: 1_024, count: 200), bodySize: { $0 }).map(\.count) == [200])
        let halves = RevisionWindow.groups(Array(repeating: limit / 2, count: 5), bodySize: { $0 })
        #expect(halves.map(\.count) == [2, 2, 1])
        // An oversized body still goes, alone.
        let mixed = RevisionWindow.groups([10, limit * 3, 10, 10], bodySize: { $0 })
        #expect(mixed.map(Array.init) == [[10], [limit * 3], [10, 10]])
        #expect(RevisionWindow.groups([Int](), bodySize: { $0 }).isEmpty)
    }
}
