import EdgeDiscovery
import Testing

@Suite("Service advertisement values")
struct ServiceAdvertisementTests {
    @Test("TXT strings split at the first '=', and a bare key is a boolean attribute")
    func txtParsing() {
        #expect(TXTEntry(parsing: "db=a,b") == TXTEntry(key: "db", value: "a,b"))
        #expect(TXTEntry(parsing: "s256=ab=c") == TXTEntry(key: "s256", value: "ab=c"))
        #expect(TXTEntry(parsing: "flag") == TXTEntry(key: "flag", value: nil))
        #expect(TXTEntry(key: "tls", value: "on").description == "tls=on")
    }

    @Test("names, ports and TXT records that DNS cannot carry are refused with the reason")
    func validation() throws {
        #expect(throws: DiscoveryError.self) {
            try ServiceAdvertisement(name: String(repeating: "x", count: 64), type: "_a._tcp", port: 1, txt: [])
        }
        #expect(throws: DiscoveryError.self) { try ServiceAdvertisement(name: "", type: "_a._tcp", port: 1, txt: []) }
        #expect(throws: DiscoveryError.self) { try ServiceAdvertisement(name: "n", type: "_a._tcp", port: 0, txt: []) }
        do {
            _ = try ServiceAdvertisement(
                name: "n", type: "_a._tcp", port: 1,
                txt: [TXTEntry(key: "db", value: String(repeating: "d", count: 253))])
            Issue.record("a 256-byte TXT string was accepted")
        } catch {
            #expect("\(error)".contains("255"))
        }
        #expect(throws: DiscoveryError.self) {
            try ServiceAdvertisement(name: "n", type: "_a._tcp", port: 1, txt: [TXTEntry(key: "a=b", value: "c")])
        }
        let valid = try ServiceAdvertisement(
            name: "Shop Gateway", type: "_edgegateway._tcp", port: 4984, txt: [TXTEntry(key: "tls", value: "on")])
        #expect(valid.port == 4984)
    }
}
