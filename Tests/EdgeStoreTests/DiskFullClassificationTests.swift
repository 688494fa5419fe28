import Foundation
import Testing

@testable import EdgeStore

@Suite("A full disk is told apart from other I/O failures")
struct DiskFullClassificationTests {
    /// SQLITE_FULL is classified by `StoreError(mapping:)`; ReliabilityTests.DiskFullTests meets it for real.
    @Test("ENOSPC becomes diskFull; other failures stay io")
    func classification() {
        #expect(
            StoreError.io(path: "/b", error: NSError(domain: NSPOSIXErrorDomain, code: Int(ENOSPC)))
                == .diskFull(path: "/b"))
        #expect(StoreError.io(path: "/b", error: CocoaError(.fileWriteOutOfSpace)) == .diskFull(path: "/b"))
        guard case .io = StoreError.io(path: "/b", error: NSError(domain: NSPOSIXErrorDomain, code: Int(EACCES))) else {
            Issue.record("EACCES taken for a full disk")
            return
        }
        #expect(StoreError.diskFull(path: "/d").description == "disk full: no space left to write /d")
    }

    @Test("a refused write marks the store full until the next write succeeds")
    func stateFollowsWrites() {
        let state = DiskFullState()
        #expect(!state.isFull)
        _ = state.record(.io(path: "/x", reason: "EIO"))
        #expect(!state.isFull)
        #expect(state.record(.diskFull(path: "/x")) == .diskFull(path: "/x"))
        #expect(state.isFull)
        state.recordSuccess()
        #expect(!state.isFull)
    }
}
