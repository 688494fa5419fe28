import NetworkInterfaces
import Testing

@Suite("Interface addresses")
struct InterfaceAddressTests {
    static func address(_ interface: String, _ text: String) -> InterfaceAddress {
        InterfaceAddress(interfaceName: interface, address: IPAddressLiteral(text)!)
    }

    static let host = [
        address("lo", "127.0.0.1"), address("lo", "::1"),
        address("eth0", "fe80::1"), address("eth0", "192.168.1.10"), address("eth0", "fd00::10"),
        address("wlan0", "10.0.0.5"),
    ]

    @Test("0.0.0.0 lists every non-loopback IPv4 address")
    func allIPv4() {
        let addresses = InterfaceAddress.reachableAddresses(
            forListenerInterface: "0.0.0.0", among: Self.host)
        #expect(addresses.map(\.description) == ["192.168.1.10", "10.0.0.5"])
    }

    @Test(":: lists IPv4 first, then IPv6 without link-local")
    func allAddresses() {
        let addresses = InterfaceAddress.reachableAddresses(
            forListenerInterface: "::", among: Self.host)
        #expect(addresses.map(\.description) == ["192.168.1.10", "10.0.0.5", "fd00::10"])
    }

    @Test("an interface name lists that interface's addresses; a literal is itself")
    func namedInterfaceAndLiteral() {
        #expect(
            InterfaceAddress.reachableAddresses(forListenerInterface: "eth0", among: Self.host).map(
                \.description)
                == ["192.168.1.10", "fd00::10"])
        #expect(
            InterfaceAddress.reachableAddresses(forListenerInterface: "192.168.7.7", among: Self.host)
                .map(\.description) == ["192.168.7.7"])
        #expect(
            InterfaceAddress.reachableAddresses(forListenerInterface: "nope0", among: Self.host).isEmpty)
    }

    @Test("the host's own interfaces include loopback")
    func systemInterfaces() {
        #expect(InterfaceAddress.all().contains { $0.address.isLoopback })
    }

    @Test("IP literals are canonicalised and classified")
    func literals() {
        #expect(IPAddressLiteral("FD00:0::1")?.description == "fd00::1")
        #expect(IPAddressLiteral("fe80::1")?.isIPv6LinkLocal == true)
        #expect(IPAddressLiteral("fe80::1%eth0") == nil)
        #expect(IPAddressLiteral("eth0") == nil)
    }

    @Test("a listener binds an IP literal as given, else the interface's IPv4, else its IPv6 with a zone if link-local")
    func bindAddress() {
        #expect(InterfaceAddress.bindAddress(forListenerInterface: "0.0.0.0", among: Self.host) == "0.0.0.0")
        #expect(InterfaceAddress.bindAddress(forListenerInterface: "fe80::1%eth0", among: Self.host) == "fe80::1%eth0")
        #expect(InterfaceAddress.bindAddress(forListenerInterface: "eth0", among: Self.host) == "192.168.1.10")
        let ipv6Only = [Self.address("eth1", "fe80::2"), Self.address("eth1", "fd00::2")]
        #expect(InterfaceAddress.bindAddress(forListenerInterface: "eth1", among: ipv6Only) == "fe80::2%eth1")
        #expect(InterfaceAddress.bindAddress(forListenerInterface: "eth9", among: Self.host) == nil)
    }
}
