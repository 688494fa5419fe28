#if canImport(Glibc)
    import Glibc
#endif

// A bad link between two network interfaces, in user space: every Ethernet frame that arrives on one is sent out
// of the other after `delay`, except the `loss` share, which is dropped, and the `reorder` share, which is sent at
// once and so overtakes the frames still held back — the impairments of `tc qdisc … netem delay D reorder R
// loss L` on both ends of a link. It exists because kernels built without sch_netem (as in some CI virtual
// machines) cannot run netem; it needs only packet sockets.
//
//   link-emulator <interface> <interface> <delay-ms> <reorder-%> <loss-%> <cut-file>
//
// While <cut-file> exists every frame is dropped, as when a cable is pulled or a peer loses power: neither side
// sees a FIN or an RST. The interfaces' peers must not offload checksums or segmentation (`ethtool -K … tx off
// tso off gso off`): frames are passed on as read, and a packet socket reads them before the kernel completes them.

/// `struct sockaddr_ll` of <linux/if_packet.h>, which the Glibc module does not export.
struct PacketAddress {
    var family = UInt16(AF_PACKET)
    var protocolNumber: UInt16 = 0
    var interfaceIndex: Int32 = 0
    var hardwareType: UInt16 = 0
    var packetType: UInt8 = 0
    var addressLength: UInt8 = 0
    var address: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) = (0, 0, 0, 0, 0, 0, 0, 0)
}

/// <linux/if_ether.h> and <linux/if_packet.h>.
let allProtocols: UInt16 = 0x0003
let outgoingPacket: UInt8 = 4

struct Frame {
    var due: Double
    var output: Int
    var bytes: [UInt8]
}

func now() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}

func say(_ line: String, to descriptor: Int32 = 1) {
    let bytes = Array((line + "\n").utf8)
    _ = write(descriptor, bytes, bytes.count)
}

func fail(_ message: String) -> Never {
    say("link-emulator: \(message): \(String(cString: strerror(errno)))", to: 2)
    exit(1)
}

/// A packet socket that reads and writes whole Ethernet frames of one interface.
func packetSocket(interface: String) -> Int32 {
    let descriptor = socket(AF_PACKET, Int32(SOCK_RAW.rawValue), Int32(allProtocols.bigEndian))
    guard descriptor >= 0 else { fail("socket for \(interface)") }
    let index = if_nametoindex(interface)
    guard index != 0 else { fail("no interface \(interface)") }
    var address = PacketAddress(protocolNumber: allProtocols.bigEndian, interfaceIndex: Int32(index))
    let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(descriptor, $0, socklen_t(MemoryLayout<PacketAddress>.size))
        }
    }
    guard bound == 0 else { fail("bind to \(interface)") }
    return descriptor
}

let arguments = CommandLine.arguments
guard arguments.count == 7, let delay = Double(arguments[3]), let reorder = Double(arguments[4]),
    let loss = Double(arguments[5])
else {
    say("usage: link-emulator <interface> <interface> <delay-ms> <reorder-%> <loss-%> <cut-file>", to: 2)
    exit(64)
}
let cutFile = arguments[6]
let sockets = [packetSocket(interface: arguments[1]), packetSocket(interface: arguments[2])]
var held: [Frame] = []
var buffer = [UInt8](repeating: 0, count: 65_536)
say("link-emulator: \(arguments[1]) <-> \(arguments[2]), delay \(delay) ms, reorder \(reorder) %, loss \(loss) %")

while true {
    let current = now()
    let nextDue = held.map(\.due).min()
    let waitMilliseconds = nextDue.map { max(0, min(20, Int32(($0 - current) * 1000))) } ?? 20
    var polled = sockets.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
    let ready = poll(&polled, nfds_t(polled.count), waitMilliseconds)
    if ready < 0 && errno != EINTR { fail("poll") }
    let isCut = access(cutFile, F_OK) == 0
    for (input, entry) in polled.enumerated() where entry.revents & Int16(POLLIN) != 0 {
        var source = PacketAddress()
        var sourceLength = socklen_t(MemoryLayout<PacketAddress>.size)
        let count = withUnsafeMutablePointer(to: &source) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                recvfrom(sockets[input], &buffer, buffer.count, Int32(MSG_DONTWAIT), $0, &sourceLength)
            }
        }
        // Frames this program sent come back on the socket as outgoing ones.
        guard count > 0, source.packetType != outgoingPacket else { continue }
        if isCut || Double.random(in: 0..<100) < loss {
            continue
        }
        let wait = Double.random(in: 0..<100) < reorder ? 0 : delay / 1000
        held.append(Frame(due: now() + wait, output: 1 - input, bytes: Array(buffer[0..<count])))
    }
    let sendTime = now()
    var index = 0
    while index < held.count {
        guard held[index].due <= sendTime else {
            index += 1
            continue
        }
        let frame = held.remove(at: index)
        // A cut also drops what was on the wire when it began.
        if isCut {
            continue
        }
        _ = frame.bytes.withUnsafeBytes { send(sockets[frame.output], $0.baseAddress, $0.count, 0) }
    }
}
