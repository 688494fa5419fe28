import Synchronization

/// One request's place in the order in which the requests of its profile arrived.
///
/// Handlers run concurrently, each in its own task, so two requests that arrive back to back can reach any
/// later step in either order. A handler that must take one short, synchronous step in arrival order (queueing a
/// `rev` for the group commit, which gives the document its sequence) hands that step to `perform(_:)`; the work
/// before and after it still runs in parallel. The connection ends the turn of a handler that returns without
/// performing anything, so a failed request never holds up the ones behind it.
public struct BLIPArrivalTurn: Sendable {
    let line: ArrivalLine
    let position: Int

    /// Runs `step` once every request of the profile that arrived before this one has performed its step or
    /// ended its turn: now, or later on the task that completes the last of those. Nothing waits: a step whose
    /// turn has not come is kept and run by whoever lets it in, so a long line never becomes a chain of task
    /// wake-ups. Call it at most once per turn; `step` must be quick and must not block.
    public func perform(_ step: @escaping @Sendable () -> Void) {
        line.submit(position, step)
    }

    /// Lets the requests behind this one take their steps without one from it; does nothing once it performed. The
    /// connection calls it when the handler returns.
    func end() {
        line.submit(position, nil)
    }
}

/// The line of turns of one profile's requests on one connection.
final class ArrivalLine: Sendable {
    private struct State {
        var issued = 0
        /// The first position whose step has not run.
        var head = 0
        /// Steps submitted ahead of their turn (`nil`: a turn ended without one).
        var waiting: [Int: (@Sendable () -> Void)?] = [:]
        /// Whether some task is running the steps from `head` on; others only leave theirs for it.
        var isRunning = false
    }

    private let state = Mutex(State())

    /// The next arrival's turn; called in arrival order.
    func issue() -> BLIPArrivalTurn {
        let position = state.withLock { state in
            defer { state.issued += 1 }
            return state.issued
        }
        return BLIPArrivalTurn(line: self, position: position)
    }

    func submit(_ position: Int, _ step: (@Sendable () -> Void)?) {
        let mayRun = state.withLock { state -> Bool in
            guard position >= state.head, state.waiting[position] == nil else { return false }
            state.waiting[position] = .some(step)
            guard !state.isRunning else { return false }
            state.isRunning = true
            return true
        }
        guard mayRun else { return }
        // Steps run outside the lock, one at a time, in position order.
        while let step = state.withLock({ state -> (@Sendable () -> Void)?? in
            guard let next = state.waiting.removeValue(forKey: state.head) else {
                state.isRunning = false
                return nil
            }
            state.head += 1
            return next
        }) {
            step?()
        }
    }
}
