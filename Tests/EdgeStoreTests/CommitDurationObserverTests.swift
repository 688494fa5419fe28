import Synchronization
import Testing

@testable import EdgeStore

@Suite("Commit duration observer")
struct CommitDurationObserverTests {
    /// A gateway commits millions of times in its life. The handler used to be re-wrapped on every call, so a
    /// call walked one more thunk each time: this loop crashed with a stack overflow before the fix.
    @Test("a million commits are reported through the same handler without the calls growing deeper")
    func millionCommits() {
        let observer = CommitDurationObserver()
        let total = Mutex<Duration>(.zero)
        observer.observe { duration in total.withLock { $0 += duration } }
        for _ in 0..<1_000_000 {
            observer.record(.microseconds(1))
        }
        #expect(total.withLock { $0 } == .seconds(1))
    }

    @Test("a handler set to nil stops reporting")
    func stopReporting() {
        let observer = CommitDurationObserver()
        let calls = Mutex(0)
        observer.observe { _ in calls.withLock { $0 += 1 } }
        observer.record(.milliseconds(1))
        observer.observe(nil)
        observer.record(.milliseconds(1))
        #expect(calls.withLock { $0 } == 1)
    }
}
