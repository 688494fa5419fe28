import EdgeGatewayTestSupport
import Foundation
import Testing

/// The fixtures are copied into this package; when the shared originals are reachable, the copies must
/// match them byte for byte.
@Suite("Fixture copies")
struct FixtureCopyTests {
    /// The recorded Couchbase Lite versions: 3.2.4 (CBMobile_3) and 4.0.3 (CBMobile_4).
    static let fixtureSets = ["cbl-3.2.4", "cbl-4.0.3"]

    /// `../shared` next to the package (the project layout), else `/work/shared`.
    static let sharedFixtures: URL? = [
        packageRoot.deletingLastPathComponent().appendingPathComponent("shared/fixtures"),
        URL(fileURLWithPath: "/work/shared/fixtures"),
    ].first { FileManager.default.fileExists(atPath: $0.path) }

    @Test(
        "copied fixtures are byte-identical to the shared ones",
        .enabled(if: sharedFixtures != nil, "shared fixtures not present"),
        arguments: fixtureSets)
    func identicalToShared(set: String) throws {
        let shared = try #require(Self.sharedFixtures).appendingPathComponent(set)
        let names = try FileManager.default.contentsOfDirectory(atPath: shared.path).sorted()
        #expect(names.contains("README.md"))
        let copies = [
            packageRoot.appendingPathComponent("Tests/BLIPCodecTests/Fixtures").appendingPathComponent(set),
            Bundle.module.resourceURL!.appendingPathComponent("Fixtures").appendingPathComponent(set),
        ]
        for copy in copies {
            #expect(try FileManager.default.contentsOfDirectory(atPath: copy.path).sorted() == names)
            for name in names {
                let original = try Data(contentsOf: shared.appendingPathComponent(name))
                let copied = try Data(contentsOf: copy.appendingPathComponent(name))
                #expect(original == copied, "\(copy.path)/\(name)")
            }
        }
    }
}
