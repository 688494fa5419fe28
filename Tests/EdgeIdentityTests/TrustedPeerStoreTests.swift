import EdgeIdentity
import Foundation
import Testing

@Suite("Trusted peers recorded by `trust add`")
struct TrustedPeerStoreTests {
    static func withStore(_ body: (TrustedPeerStore, String) throws -> Void) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("edge-trust-\(UUID().uuidString)")
            .path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try body(TrustedPeerStore(dataDirectory: directory), directory)
    }

    static let digest = CertificateFingerprint(derBytes: Array("certificate".utf8), algorithm: .sha256)

    @Test("pins are added, replaced per endpoint, turned into a pinned policy, and removed; the file is private")
    func lifecycle() throws {
        try Self.withStore { store, _ in
            #expect(try store.entries().isEmpty)
            #expect(try store.policy(host: "10.0.0.5", port: 4984) == nil)
            try store.add(
                .init(
                    endpoint: TrustedPeerStore.endpoint(host: "10.0.0.5", port: 4984), sha256: Self.digest, label: "a"))
            let other = CertificateFingerprint(derBytes: Array("other".utf8), algorithm: .sha256)
            try store.add(
                .init(endpoint: TrustedPeerStore.endpoint(host: "10.0.0.5", port: 4984), sha256: other, label: "b"))
            try store.add(
                .init(endpoint: TrustedPeerStore.endpoint(host: "fd00::1", port: 4984), sha256: Self.digest, label: "c")
            )
            #expect(try store.entries().map(\.endpoint) == ["10.0.0.5:4984", "[fd00::1]:4984"])
            #expect(try store.policy(host: "10.0.0.5", port: 4984) == .pinned(sha256: other.bytes))
            #expect(try store.policy(host: "[FD00::1]", port: 4984) == .pinned(sha256: Self.digest.bytes))
            let attributes = try FileManager.default.attributesOfItem(atPath: store.path)
            #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
            #expect(try store.remove(endpoint: "10.0.0.5:4984"))
            #expect(try !store.remove(endpoint: "10.0.0.5:4984"))
            #expect(try store.entries().map(\.label) == ["c"])
        }
    }

    @Test("a corrupt file is reported, never silently replaced")
    func corruptFile() throws {
        try Self.withStore { store, directory in
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            try Data("{not json".utf8).write(to: URL(fileURLWithPath: store.path))
            #expect(throws: IdentityError.self) { try store.entries() }
            #expect(throws: IdentityError.self) {
                try store.add(.init(endpoint: "h:1", sha256: Self.digest, label: "x"))
            }
            #expect(
                String(decoding: try Data(contentsOf: URL(fileURLWithPath: store.path)), as: UTF8.self) == "{not json")
        }
    }

    @Test("endpoints parse as host:port or [v6]:port")
    func endpoints() {
        #expect(TrustedPeerStore.parseEndpoint("gw.local:4984")! == ("gw.local", 4984))
        #expect(TrustedPeerStore.parseEndpoint("[::1]:443")! == ("::1", 443))
        #expect(TrustedPeerStore.parseEndpoint("::1:443") == nil)
        #expect(TrustedPeerStore.parseEndpoint("host") == nil)
        #expect(TrustedPeerStore.parseEndpoint("host:0") == nil)
        #expect(TrustedPeerStore.endpoint(host: "GW.Local", port: 1) == "gw.local:1")
    }
}
