import Foundation
import Synchronization

/// A child process started with `posix_spawn`, with the subset of Foundation's `Process` interface the tests use.
///
/// The tests do not use Foundation's `Process`: on Linux its `run()` finds the highest open descriptor by listing
/// /proc/self/fd and copying each entry's whole 256-byte name, past the end of short entries. A test process with
/// thousands of descriptors open (hundreds of in-process gateways) fills readdir's buffer, and an entry at its end
/// read into unmapped memory: the whole test bundle died with SIGSEGV. Here the child closes every inherited
/// descriptor above 2 with `posix_spawn_file_actions_addclosefrom_np` (close_range), which lists nothing.
/// It also never mistakes a child closing its inherited descriptors for its exit, as Foundation's did with
/// avahi-daemon: exit is learnt from `waitid` alone.
package final class SpawnedProcess: @unchecked Sendable {
    /// The program to run; a path, never looked up in PATH (use /usr/bin/env for that).
    package var executableURL: URL?
    package var arguments: [String] = []
    /// The child's whole environment; `nil` passes this process's environment on.
    package var environment: [String: String]?
    /// A `FileHandle` (`FileHandle.nullDevice` for /dev/null) or a `Pipe`; `nil` shares this process's.
    package var standardInput: Any?
    package var standardOutput: Any?
    package var standardError: Any?

    private enum State {
        case notStarted
        case running(pid_t)
        case exited(pid_t, status: Int32, reason: Process.TerminationReason)
    }

    private let state = Mutex(State.notStarted)

    /// glibc declares `posix_spawn_file_actions_addclosefrom_np` only for `_DEFAULT_SOURCE`, which Swift's Glibc
    /// module is not built with, so it is looked up by name.
    private static let closeFrom: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32)? =
        {
            guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np")
            else {
                return nil
            }
            return unsafeBitCast(
                symbol, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)
        }()

    package init() {}

    package struct SpawnError: Error, CustomStringConvertible {
        package var executable: String
        package var reason: String
        package var description: String { "cannot start \(executable): \(reason)" }
    }

    package func run() throws {
        guard let executable = executableURL?.path else {
            throw SpawnError(executable: "(none)", reason: "no executableURL")
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var parentCopiesToClose: [FileHandle] = []
        for (target, stream) in [(Int32(0), standardInput), (1, standardOutput), (2, standardError)] {
            switch stream {
            case nil:
                continue
            case let pipe as Pipe:
                let childEnd = target == 0 ? pipe.fileHandleForReading : pipe.fileHandleForWriting
                posix_spawn_file_actions_adddup2(&actions, childEnd.fileDescriptor, target)
                // Once the child has its copy, the parent's must go, or a reader of the pipe never sees its end.
                parentCopiesToClose.append(childEnd)
            case let handle as FileHandle where handle === FileHandle.nullDevice || handle.fileDescriptor < 0:
                posix_spawn_file_actions_addopen(&actions, target, "/dev/null", target == 0 ? O_RDONLY : O_WRONLY, 0)
            case let handle as FileHandle:
                posix_spawn_file_actions_adddup2(&actions, handle.fileDescriptor, target)
            default:
                throw SpawnError(
                    executable: executable, reason: "standard stream \(target) is neither a Pipe nor a FileHandle")
            }
        }
        guard let closeFrom = Self.closeFrom, closeFrom(&actions, 3) == 0 else {
            throw SpawnError(
                executable: executable, reason: "posix_spawn_file_actions_addclosefrom_np (glibc 2.34+) is missing")
        }

        // The child starts with default signal handling and nothing blocked, whatever this process set up (the
        // Swift runtime and NIO ignore SIGPIPE, and an ignored signal survives exec).
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var allSignals = sigset_t()
        sigfillset(&allSignals)
        posix_spawnattr_setsigdefault(&attributes, &allSignals)
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        let environmentLines = (environment ?? ProcessInfo.processInfo.environment).map {
            strdup("\($0.key)=\($0.value)")
        }
        let envp = environmentLines + [nil]
        defer { for line in environmentLines { free(line) } }

        try state.withLock { state in
            guard case .notStarted = state else {
                throw SpawnError(executable: executable, reason: "already started")
            }
            var pid: pid_t = 0
            let result = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
            guard result == 0 else {
                throw SpawnError(executable: executable, reason: String(cString: strerror(result)))
            }
            state = .running(pid)
        }
        for handle in parentCopiesToClose {
            try? handle.close()
        }
    }

    package var processIdentifier: Int32 {
        switch state.withLock({ $0 }) {
        case .notStarted: 0
        case .running(let pid), .exited(let pid, _, _): pid
        }
    }

    package var isRunning: Bool {
        reap(blocking: false)
        if case .running = state.withLock({ $0 }) { return true }
        return false
    }

    /// Blocks the calling thread until the child has exited.
    package func waitUntilExit() {
        reap(blocking: true)
    }

    /// Waits for the child's exit on a thread of its own, leaving the concurrency pool to the caller's neighbours.
    package func waitForExit() async {
        _ = try? await onOwnThread { self.waitUntilExit() }
    }

    /// The exit status, or the signal number for a child killed by a signal; only meaningful after exit.
    package var terminationStatus: Int32 {
        if case .exited(_, let status, _) = state.withLock({ $0 }) { return status }
        return 0
    }

    package var terminationReason: Process.TerminationReason {
        if case .exited(_, _, let reason) = state.withLock({ $0 }) { return reason }
        return .exit
    }

    /// Sends SIGTERM to a child that has not been collected yet.
    package func terminate() {
        if case .running(let pid) = state.withLock({ $0 }) {
            kill(pid, SIGTERM)
        }
    }

    /// Waits for the child's exit without collecting it (so that any number of threads may wait), then collects
    /// it once, under the lock.
    private func reap(blocking: Bool) {
        guard case .running(let pid) = state.withLock({ $0 }) else { return }
        var info = siginfo_t()
        while true {
            let options = WEXITED | WNOWAIT | (blocking ? 0 : WNOHANG)
            if waitid(P_PID, id_t(pid), &info, options) == 0 { break }
            if errno == EINTR { continue }
            return
        }
        // With WNOHANG and no exit yet, waitid succeeds with a zero pid.
        guard info._sifields._sigchld.si_pid == pid else { return }
        state.withLock { state in
            guard case .running = state else { return }
            var status: Int32 = 0
            guard waitpid(pid, &status, 0) == pid else { return }
            let signalled = status & 0x7f
            state =
                signalled == 0
                ? .exited(pid, status: (status >> 8) & 0xff, reason: .exit)
                : .exited(pid, status: signalled, reason: .uncaughtSignal)
        }
    }
}
