import CMalloc
import Foundation

/// Figures of this process that Prometheus' process collectors report, read from Linux's /proc; nil where
/// /proc is missing (macOS development builds).
enum ProcessFigures {
    /// Seconds since the Unix epoch at which the process started: its start in clock ticks after boot
    /// (/proc/self/stat, field 22) plus the boot time (/proc/stat, `btime`).
    static let startTime: Double? = {
        guard let stat = try? String(contentsOfFile: "/proc/self/stat", encoding: .utf8),
            let afterName = stat.lastIndex(of: ")"),
            let bootLine = try? String(contentsOfFile: "/proc/stat", encoding: .utf8)
                .split(separator: "\n").first(where: { $0.hasPrefix("btime ") }),
            let bootTime = Double(bootLine.dropFirst("btime ".count))
        else { return nil }
        // Fields after the command name start at field 3 (state); the start time is field 22.
        let fields = stat[stat.index(after: afterName)...].split(separator: " ")
        guard fields.count > 19, let ticks = Double(fields[19]) else { return nil }
        return bootTime + ticks / Double(sysconf(Int32(_SC_CLK_TCK)))
    }()

    /// Resident set size in bytes (/proc/self/statm, second field, in pages).
    static func residentMemory() -> Double? {
        guard let statm = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return nil }
        let fields = statm.split(separator: " ")
        guard fields.count > 1, let pages = Double(fields[1]) else { return nil }
        return pages * Double(sysconf(Int32(_SC_PAGESIZE)))
    }

    /// Bytes allocated on the heap and not yet freed; nil where the C library cannot tell. The resident size less
    /// this and the mapped files is what the allocator keeps of freed memory, so a leak shows here and
    /// fragmentation does not.
    static func heapInUse() -> Double? {
        let bytes = CMalloc_bytesInUse()
        return bytes < 0 ? nil : Double(bytes)
    }

    /// Open file descriptors, sockets included.
    static func openFileDescriptors() -> Double? {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")).map { Double($0.count) }
    }
}
