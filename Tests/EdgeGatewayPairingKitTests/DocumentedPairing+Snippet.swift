import EdgeGatewayTestSupport
import Foundation

// The code between the two markers of DocumentedPairing.swift is shown verbatim in docs/pairing.md ("In your app"); a test checks that it is,
// and the end-to-end test pairs through it, so the documented Swift is compiled and run.

enum DocumentedPairing {
    static let beginMarker = "// docs/pairing.md: begin\n"
    static let endMarker = "// docs/pairing.md: end"

    static let sourceFile = packageRoot.appendingPathComponent(
        "Tests/EdgeGatewayPairingKitTests/DocumentedPairing.swift")

    /// The lines between the markers in `sourceFile`.
    static func snippet() throws -> String {
        let source = try String(contentsOf: sourceFile, encoding: .utf8)
        guard let begin = source.range(of: beginMarker), let end = source.range(of: endMarker) else {
            throw TimedOut(description: "the snippet markers are missing from \(sourceFile.path)")
        }
        return String(source[begin.upperBound..<end.lowerBound])
    }

    static var documentation: URL {
        packageRoot.appendingPathComponent("docs/pairing.md")
    }
}
