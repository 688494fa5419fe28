/// The hybrid logical clock that stamps this node's versions (spec §4.6, WIRE-NOTES §4): wall-clock nanoseconds
/// since 1970 with the low 16 bits a counter, never going backwards, and always ahead of every timestamp issued
/// or observed, so that a version written here is newer than everything it was written over, also when the wall
/// clock is set back. The store keeps `last` so that this holds across restarts.
package struct HybridLogicalClock: Sendable, Equatable {
    package private(set) var last: UInt64

    /// The counter's bits: a tick of the wall clock is 65,536 ns.
    static let counterMask: UInt64 = 0xFFFF

    package init(last: UInt64 = 0) {
        self.last = last
    }

    /// The next timestamp: the wall clock's tick when it is ahead of the last one, else the last one plus one.
    package mutating func next(wallClockNanoseconds: UInt64) -> UInt64 {
        let tick = wallClockNanoseconds & ~Self.counterMask
        last = tick > last ? tick : last + 1
        return last
    }

    /// Takes in a timestamp received in a version, so that the next one issued is ahead of it.
    package mutating func observe(_ timestamp: UInt64) {
        last = max(last, timestamp)
    }
}
