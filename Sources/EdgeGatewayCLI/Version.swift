import ArgumentParser
import EdgeGatewayApp

struct Version: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Print the version.")

    func run() {
        print("edge-gateway \(EdgeGatewayVersion.current)")
    }
}
