import Foundation

/// The numeric fields of a process's `/proc/PID/status`, such as `VmRSS` or `Threads` (memory in KiB).
package struct ProcessStatus: Sendable {
    package let fields: [String: Int]

    /// Reads `/proc/<pid>/status`, or this process's own when `pid` is nil; empty when the process is gone.
    package init(pid: Int32? = nil) {
        let path = pid.map { "/proc/\($0)/status" } ?? "/proc/self/status"
        var fields: [String: Int] = [:]
        for line in ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: "\n") {
            let parts = line.split(whereSeparator: { $0 == ":" || $0 == " " || $0 == "\t" })
            if parts.count >= 2, let value = Int(parts[1]) { fields[String(parts[0])] = value }
        }
        self.fields = fields
    }

    /// The field's value, or -1 when the file or the field is missing.
    package subscript(_ name: String) -> Int { fields[name] ?? -1 }
}
