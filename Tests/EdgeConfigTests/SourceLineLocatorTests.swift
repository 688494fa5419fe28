import Testing

@testable import EdgeConfig

@Suite("Source line locator")
struct SourceLineLocatorTests {
    private let locator = SourceLineLocator(
        source: """
            # comment with port = 1
            title = "x"
            [node]
            name = "a"   # trailing comment

            [[listener]]
            name = "first"
            databases = [
              "a",
              "port = 3",
            ]
            port = 4984
            description = \"\"\"
            tls = "inside a string"
            \"\"\"
            tls = "off"

            [[ listener ]]
            "name" = "second"
            [listener.dns_sd]
            enabled = true
            """
    )

    @Test func rootKey() {
        #expect(locator.line(ofKey: "title", inTable: nil) == 2)
    }

    @Test func keyInTable() {
        #expect(locator.line(ofKey: "name", inTable: "node") == 4)
    }

    @Test func keysInArrayOfTablesByOccurrence() {
        #expect(locator.line(ofKey: "name", inTable: "listener", occurrence: 0) == 7)
        #expect(locator.line(ofKey: "name", inTable: "listener", occurrence: 1) == 19)
    }

    @Test func multiLineArrayAndStringContentsAreNotKeys() {
        #expect(locator.line(ofKey: "port", inTable: "listener", occurrence: 0) == 12)
        #expect(locator.line(ofKey: "tls", inTable: "listener", occurrence: 0) == 16)
    }

    @Test func missingKeyFallsBackToHeader() {
        #expect(locator.line(ofKey: "auth", inTable: "listener", occurrence: 1) == 18)
        #expect(locator.line(ofKey: nil, inTable: "node") == 3)
    }

    @Test func subTableResolvesToItsHeader() {
        #expect(locator.line(ofKey: "dns_sd", inTable: "listener", occurrence: 1) == 20)
    }

    @Test func unknownTable() {
        #expect(locator.line(ofKey: "x", inTable: "upstream") == nil)
        #expect(locator.line(ofKey: nil, inTable: nil) == nil)
    }
}
