import Foundation

/// A process's resident memory, descriptors, threads and CPU time, read from /proc.
package struct ProcessUsage: Codable, Sendable, CustomStringConvertible {
    package var residentKiB = 0
    package var peakResidentKiB = 0
    package var fileDescriptors = 0
    package var threads = 0
    /// User and system time since the process started.
    package var cpuSeconds = 0.0

    package init() {}

    /// The process's usage now; zeros when it is gone.
    package init(pid: Int32) {
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
    package func peak(with other: ProcessUsage) -> ProcessUsage {
        var peak = self
        peak.residentKiB = max(residentKiB, other.residentKiB)
        peak.peakResidentKiB = max(peakResidentKiB, other.peakResidentKiB)
        peak.fileDescriptors = max(fileDescriptors, other.fileDescriptors)
        peak.threads = max(threads, other.threads)
        peak.cpuSeconds = max(cpuSeconds, other.cpuSeconds)
        return peak
    }

    package var description: String {
        "RSS \(residentKiB / 1024) MiB (peak \(peakResidentKiB / 1024) MiB), \(fileDescriptors) fds, "
            + "\(threads) threads, \(Int(cpuSeconds.rounded())) s CPU"
    }
}

/// What the `LoadGenerator` process prints when it is done, one JSON object, and the load tests read.
package struct LoadGeneratorSummary: Codable, Sendable {
    package var clients: Int
    package var writers: Int
    package var documentsPerClient: Int
    package var writeIntervalMilliseconds: Int
    package var connectedMilliseconds: Int64
    package var writeMilliseconds: Int64
    package var convergedMilliseconds: Int64
    package var convergedAfterLastWriteMilliseconds: Int64
    package var documentsFannedOut: Int
    package var documentsExpected: Int
    package var deliveries: Int
    package var fanOutP50Milliseconds: Int64
    package var fanOutP99Milliseconds: Int64
    package var fanOutMaxMilliseconds: Int64
    package var deliveryP50Milliseconds: Int64
    package var deliveryP99Milliseconds: Int64
    package var incompleteClients: [String]
    package var gatewayIdle: ProcessUsage?
    /// The gateway with every client connected and caught up, before the first write: what idle connections hold.
    package var gatewayConnected: ProcessUsage?
    package var gatewayPeak: ProcessUsage?
    package var gatewayEnd: ProcessUsage?
    package var generator: ProcessUsage
    /// CPU time per delivery between the first write and convergence, of the gateway (nil when its process was
    /// not given) and of the generator.
    package var gatewayMicrosecondsPerDelivery: Double?
    package var generatorMicrosecondsPerDelivery: Double?
    /// The gateway after every client stayed connected and quiet for `--quiet-seconds` past convergence.
    package var gatewayAfterQuiet: ProcessUsage?

    package init(
        clients: Int, writers: Int, documentsPerClient: Int, writeIntervalMilliseconds: Int,
        connectedMilliseconds: Int64, writeMilliseconds: Int64, convergedMilliseconds: Int64,
        convergedAfterLastWriteMilliseconds: Int64, documentsFannedOut: Int, documentsExpected: Int, deliveries: Int,
        fanOutP50Milliseconds: Int64, fanOutP99Milliseconds: Int64, fanOutMaxMilliseconds: Int64,
        deliveryP50Milliseconds: Int64, deliveryP99Milliseconds: Int64, incompleteClients: [String],
        gatewayIdle: ProcessUsage?, gatewayConnected: ProcessUsage?, gatewayPeak: ProcessUsage?,
        gatewayEnd: ProcessUsage?, generator: ProcessUsage,
        gatewayMicrosecondsPerDelivery: Double?, generatorMicrosecondsPerDelivery: Double?,
        gatewayAfterQuiet: ProcessUsage? = nil
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
        self.gatewayConnected = gatewayConnected
        self.gatewayPeak = gatewayPeak
        self.gatewayEnd = gatewayEnd
        self.generator = generator
        self.gatewayMicrosecondsPerDelivery = gatewayMicrosecondsPerDelivery
        self.generatorMicrosecondsPerDelivery = generatorMicrosecondsPerDelivery
        self.gatewayAfterQuiet = gatewayAfterQuiet
    }
}
