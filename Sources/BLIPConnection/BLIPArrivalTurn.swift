import Synchronization

/// One request's place in the order in which the requests of its profile arrived.
///
/// Handlers run concurrently, each in its own task, so two requests that arrive back to back can reach any
/// later step in either order. A handler that must take one step in arrival order (storing a `rev`, which
/// gives the document its sequence) waits for its turn before that step and ends the turn after it; the
/// work before and after still runs in parallel. The connection ends the turn of a handler that returns
/// without ending it, so a failed request never holds up the ones behind it.
public struct BLIPArrivalTurn: Sendable {
    let line: ArrivalLine
    let position: Int

    /// Returns once every request of the profile that arrived before this one has ended its turn.
    public func wait() async {
        await line.wait(for: position)
    }

    /// Lets the next request of the profile past `wait()`; ending a turn twice does nothing.
    public func end() {
        line.end(position)
    }
}

/// The queue of turns of one profile's requests on one connection.
final class ArrivalLine: Sendable {
    private struct State {
        var issued = 0
        /// The first position that has not ended its turn.
        var head = 0
        /// Positions behind `head` whose turns ended early, out of order.
        var endedAhead: Set<Int> = []
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
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

    func wait(for position: Int) async {
        if state.withLock({ position <= $0.head }) { return }
        await withCheckedContinuation { continuation in
            let isHead = state.withLock { state in
                if position <= state.head { return true }
                state.waiters[position] = continuation
                return false
            }
            if isHead { continuation.resume() }
        }
    }

    func end(_ position: Int) {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard position >= state.head, !state.endedAhead.contains(position) else { return nil }
            guard position == state.head else {
                state.endedAhead.insert(position)
                return nil
            }
            state.head += 1
            while state.endedAhead.remove(state.head) != nil {
                state.head += 1
            }
            return state.waiters.removeValue(forKey: state.head)
        }
        next?.resume()
    }
}
