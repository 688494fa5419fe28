import EdgeGatewayTestSupport
import Testing

@testable import EdgeConfig

@Suite("Listener TLS, authentication and discovery")
struct ListenerValidationTests {
    private func listener(_ extraKeys: String, auth: String = "none") -> String {
        minimalTOML.replacingOccurrences(
            of: "auth = \"none\"", with: "auth = \"\(auth)\"\n" + extraKeys)
    }

    @Test func pemFilesResolveAgainstConfigurationDirectory() throws {
        let directory = try TemporaryDirectory()
        let certificate = try directory.write("tls/cert.pem", "cert")
        let key = try directory.write("tls/key.pem", "key")
        let configuration = try parse(
            listener(
                "tls = \"file\"\ntls_certificate = \"tls/cert.pem\"\ntls_key = \"./tls/key.pem\""),
            baseDirectory: directory.path
        )
        #expect(
            configuration.listeners.first?.tls
                == .pemFiles(certificate: certificate, privateKey: key))
    }

    @Test func pkcs12WithPasswordFile() throws {
        let directory = try TemporaryDirectory()
        let bundle = try directory.write("id.p12", "p12")
        try directory.write("id.password", "p12-pass\n")
        let configuration = try parse(
            listener(
                "tls = \"file\"\ntls_pkcs12 = \"id.p12\"\ntls_pkcs12_password_file = \"id.password\""
            ),
            baseDirectory: directory.path
        )
        #expect(
            configuration.listeners.first?.tls
                == .pkcs12File(path: bundle, password: Secret("p12-pass")))
    }

    @Test func fileTLSWithoutFiles() throws {
        let error = try parseError(listener("tls = \"file\""))
        #expect(error.line == 7)
        #expect(error.keyPath == "listener \"lan\".tls")
        #expect(
            error.message == "tls = \"file\" needs tls_certificate and tls_key (PEM), or tls_pkcs12"
        )
    }

    @Test func certificateWithoutKey() throws {
        let error = try parseError(listener("tls = \"file\"\ntls_certificate = \"cert.pem\""))
        #expect(error.keyPath == "listener \"lan\".tls_key")
        #expect(
            error.message
                == "missing required key `tls_key` (tls_certificate and tls_key go together)")
    }

    @Test func certificateWithSelfSignedIsRejected() throws {
        let error = try parseError(listener("tls_certificate = \"cert.pem\""))
        #expect(error.line == 7)
        #expect(error.message == "`tls_certificate` is only used with tls = \"file\"")
    }

    @Test func clientCertificateAuthNeedsTLS() throws {
        let error = try parseError(
            listener("tls = \"off\"\nclient_ca_certificates = [\"ca.pem\"]", auth: "client-cert"))
        #expect(error.line == 6)
        #expect(error.keyPath == "listener \"lan\".auth")
        #expect(error.allowedValues == ["self-signed", "file"])
    }

    @Test func clientCertificateAuthNeedsAuthorities() throws {
        let error = try parseError(listener("", auth: "client-cert"))
        #expect(error.keyPath == "listener \"lan\".client_ca_certificates")
    }

    @Test func clientCertificateAuthorities() throws {
        let directory = try TemporaryDirectory()
        let authority = try directory.write("ca.pem", "ca")
        let configuration = try parse(
            listener("client_ca_certificates = [\"ca.pem\"]", auth: "client-cert"),
            baseDirectory: directory.path
        )
        #expect(
            configuration.listeners.first?.authentication
                == .clientCertificate(trustedCertificateAuthorities: [authority]))
    }

    @Test func serviceDiscoveryDefaultsToNodeName() throws {
        let configuration = try parse("[node]\nname = \"shop\"\n" + listener("dns_sd = true"))
        #expect(
            configuration.listeners.first?.serviceDiscovery
                == ServiceDiscoverySettings(instanceName: "shop"))
    }

    @Test func serviceTypeIsValidated() throws {
        let error = try parseError(listener("dns_sd = true\ndns_sd_type = \"edgegateway\""))
        #expect(error.line == 8)
        #expect(error.keyPath == "listener \"lan\".dns_sd_type")
    }

    @Test func couchbaseLiteSampleServiceTypeIsAccepted() throws {
        let configuration = try parse(listener("dns_sd = true\ndns_sd_type = \"_cblistservicesync._tcp\""))
        #expect(configuration.listeners.first?.serviceDiscovery?.serviceType == "_cblistservicesync._tcp")
    }

    @Test func serviceTypeLongerThanALabelIsRejected() throws {
        let error = try parseError(
            listener("dns_sd = true\ndns_sd_type = \"_\(String(repeating: "a", count: 63))._tcp\""))
        #expect(error.keyPath == "listener \"lan\".dns_sd_type")
    }

    @Test func serviceTypeWithoutDiscoveryIsRejected() throws {
        let error = try parseError(listener("dns_sd_type = \"_edge._tcp\""))
        #expect(error.message == "`dns_sd_type` is only used with dns_sd = true")
    }

    @Test func interfaceMustBeAddressOrName() throws {
        #expect(try parse(listener("interface = \"::\"")).listeners.first?.interface == "::")
        #expect(
            try parse(listener("interface = \"enp3s0\"")).listeners.first?.interface == "enp3s0")
        let error = try parseError(listener("interface = \"300.1.1.1/24\""))
        #expect(error.keyPath == "listener \"lan\".interface")
    }

    @Test func twoListenersOnOnePort() throws {
        let error = try parseError(
            minimalTOML
                + "\n[[listener]]\nname = \"lan2\"\ninterface = \"192.168.1.5\"\nauth = \"none\"\ndatabases = [\"inventory\"]\n"
        )
        // The port is the default, so the error points at the listener's header.
        #expect(error.line == 9)
        #expect(error.keyPath == "listener \"lan2\".port")
        #expect(error.message == "port 4984 on 192.168.1.5 is already used by listener \"lan\"")
    }
}
