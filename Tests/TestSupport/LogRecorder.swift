import Foundation
import Logging

/// Keeps every log line the listener writes, rendered with its metadata, so that tests can show what an
/// operator would read and check what must never be written.
package final class LogRecorder: @unchecked Sendable {
    // Guarded by `lock`.
    private var recorded: [String] = []
    private let lock = NSLock()

    package init() {}

    package var all: [String] { lock.withLock { recorded } }
    package var count: Int { lock.withLock { recorded.count } }

    package func lines(from start: Int) -> [String] {
        lock.withLock { Array(recorded[min(start, recorded.count)...]) }
    }

    package func logger(level: Logger.Level) -> Logger {
        var logger = Logger(label: "edge-replication-test") { _ in Handler(recorder: self) }
        logger.logLevel = level
        return logger
    }

    fileprivate func append(_ line: String) {
        lock.withLock { recorded.append(line) }
    }

    package struct Handler: LogHandler {
        package let recorder: LogRecorder
        package var metadata: Logger.Metadata = [:]
        package var logLevel: Logger.Level = .trace

        package subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        package func log(event: LogEvent) {
            let merged = metadata.merging(event.metadata ?? [:]) { $1 }
            let rendered = merged.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
            recorder.append("\(event.level) \(event.message)" + (rendered.isEmpty ? "" : " " + rendered))
        }
    }
}
