import Foundation

// Resident memory of a listener process, idle and with many connected continuous clients. The listener runs in a
// child process (this executable with `serve`), so the clients' own memory is not counted.
//
//   swift run -c release --static-swift-stdlib ListenerMemory [clients]
//
// Statically linked, as the container ships the gateway, so the figures are the product's.

let arguments = CommandLine.arguments
if arguments.count >= 3, arguments[1] == "serve" {
    try await serve(directory: arguments[2])
    exit(0)
}
let clientCount = arguments.count >= 2 ? Int(arguments[1]) ?? 1_000 : 1_000

let directory = FileManager.default.temporaryDirectory.appendingPathComponent("edge-memory-\(UUID().uuidString)")
try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: directory) }
let server = Process()
server.executableURL = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
server.arguments = ["serve", directory.path]
let output = Pipe()
server.standardOutput = output
try server.run()
guard let portLine = String(data: output.fileHandleForReading.availableData, encoding: .utf8),
    let port = Int(portLine.trimmingCharacters(in: .whitespacesAndNewlines))
else {
    fatalError("the listener did not report its port")
}
try await Task.sleep(for: .seconds(2))
let idle = try residentMemory(of: server.processIdentifier)

actor Counter {
    var value = 0
    func increment() { value += 1 }
}
let connectedClients = Counter()
let stop = Task<Void, Never> {
    while !Task.isCancelled { try? await Task.sleep(for: .seconds(3600)) }
}
let clients = Task {
    await withTaskGroup(of: Void.self) { group in
        for index in 0..<clientCount {
            group.addTask {
                do {
                    try await idleContinuousClient(port: port, connected: { Task { await connectedClients.increment() } }, until: stop)
                } catch {
                    print("client \(index) failed: \(error)")
                }
            }
            if index % 50 == 49 { try? await Task.sleep(for: .milliseconds(20)) }
        }
    }
}
for _ in 0..<600 where await connectedClients.value < clientCount {
    try await Task.sleep(for: .milliseconds(100))
}
try await Task.sleep(for: .seconds(3))
let loaded = try residentMemory(of: server.processIdentifier)
let connected = await connectedClients.value

/// KiB as the targets are stated (decimal MB), with the binary figure beside it.
func megabytes(_ kibibytes: Int) -> String {
    let bytes = Double(kibibytes) * 1024
    return String(format: "%.1f MB (%.1f MiB)", bytes / 1_000_000, bytes / 1_048_576)
}

print("| Listener process | VmRSS | VmHWM (peak) |")
print("|---|---:|---:|")
print("| idle, no clients | \(megabytes(idle.current)) | \(megabytes(idle.peak)) |")
print("| \(connected) idle continuous clients connected | \(megabytes(loaded.current)) | \(megabytes(loaded.peak)) |")

stop.cancel()
await clients.value
server.terminate()
server.waitUntilExit()
