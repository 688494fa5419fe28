import Foundation

/// A process's resident memory, descriptors, threads and CPU time, read from /proc.
public struct ProcessUsage: Codable, Sendable, CustomStringConvertible {
    public var residentKiB = 0
    public var peakResidentKiB = 0
    public var fileDescriptors = 0
    public var threads = 0
    /// User and system time since the process started.
    public var cpuSeconds = 0.0

    public init() {}

    /// The process's usage now; zeros when it is gone.
    public init(pid: Int32) {
        let status = ProcessStatus(pid: pid)
        residentKiB = max(0, status["VmRSS"])
        peakResidentKiB = max(0, status["VmHWM"])
        threads = max(0, status["Threads"])
        fileDescriptors = ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? []).count
        // Fields 14 and 15 of /proc/PID/stat, counted after the parenthesised command name, which may hold spaces.
        if let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let nameEnd = stat.lastIndex(of: ")")
        {
            let fields = stat[stat.index(after: nameEnd)...].split(separator: " ")
            if fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) {
                cpuSeconds = (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
            }
        }
    }

    /// The larger of each figure.
    public func peak(with other: ProcessUsage) -> ProcessUsage {
        var peak = self
        peak.residentKiB = max(residentKiB, other.residentKiB)
        peak.peakResidentKiB = max(peakResidentKiB, other.peakResidentKiB)
        peak.fileDescriptors = max(fileDescriptors, other.fileDescriptors)
        peak.threads = max(threads, other.threads)
        peak.cpuSeconds = max(cpuSeconds, other.cpuSeconds)
        return peak
    }

    public var description: String {
        "RSS \(residentKiB / 1024) MiB (peak \(peakResidentKiB / 1024) MiB), \(fileDescriptors) fds, "
            + "\(threads) threads, \(Int(cpuSeconds.rounded())) s CPU"
    }
}

/// What the `LoadGenerator` process prints when it is done, one JSON object, and the load tests read.
public struct LoadGeneratorSummary: Codable, Sendable {
    public var clients: Int
    public var writers: Int
    public var documentsPerClient: Int
    public var writeIntervalMilliseconds: Int
    public var connectedMilliseconds: Int64
    public var writeMilliseconds: Int64
    public var convergedMilliseconds: Int64
    public var convergedAfterLastWriteMilliseconds: Int64
    public var documentsFannedOut: Int
    public var documentsExpected: Int
    public var deliveries: Int
    public var fanOutP50Milliseconds: Int64
    public var fanOutP99Milliseconds: Int64
    public var fanOutMaxMilliseconds: Int64
    public var deliveryP50Milliseconds: Int64
    public var deliveryP99Milliseconds: Int64
    public var incompleteClients: [String]
    public var gatewayIdle: ProcessUsage?
    public var gatewayPeak: ProcessUsage?
    public var gatewayEnd: ProcessUsage?
    public var generator: ProcessUsage

    public init(
        clients: Int, writers: Int, documentsPerClient: Int, writeIntervalMilliseconds: Int,
        connectedMilliseconds: Int64, writeMilliseconds: Int64, convergedMilliseconds: Int64,
        convergedAfterLastWriteMilliseconds: Int64, documentsFannedOut: Int, documentsExpected: Int, deliveries: Int,
        fanOutP50Milliseconds: Int64, fanOutP99Milliseconds: Int64, fanOutMaxMilliseconds: Int64,
        deliveryP50Milliseconds: Int64, deliveryP99Milliseconds: Int64, incompleteClients: [String],
        gatewayIdle: ProcessUsage?, gatewayPeak: ProcessUsage?, gatewayEnd: ProcessUsage?, generator: ProcessUsage
    ) {
        self.clients = clients
        self.writers = writers
        self.documentsPerClient = documentsPerClient
        self.writeIntervalMilliseconds = writeIntervalMilliseconds
        self.connectedMilliseconds = connectedMilliseconds
        self.writeMilliseconds = writeMilliseconds
        self.convergedMilliseconds = convergedMilliseconds
        self.convergedAfterLastWriteMilliseconds = convergedAfterLastWriteMilliseconds
        self.documentsFannedOut = documentsFannedOut
        self.documentsExpected = documentsExpected
        self.deliveries = deliveries
        self.fanOutP50Milliseconds = fanOutP50Milliseconds
        self.fanOutP99Milliseconds = fanOutP99Milliseconds
        self.fanOutMaxMilliseconds = fanOutMaxMilliseconds
        self.deliveryP50Milliseconds = deliveryP50Milliseconds
        self.deliveryP99Milliseconds = deliveryP99Milliseconds
        self.incompleteClients = incompleteClients
        self.gatewayIdle = gatewayIdle
        self.gatewayPeak = gatewayPeak
        self.gatewayEnd = gatewayEnd
        self.generator = generator
    }
}
