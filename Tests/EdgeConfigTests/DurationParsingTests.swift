import Testing

@testable import EdgeConfig

@Suite("Duration parsing")
struct DurationParsingTests {
    @Test(arguments: [
        ("250ms", Duration.milliseconds(250)),
        ("300s", .seconds(300)),
        ("5m", .seconds(300)),
        ("1h30m", .seconds(5_400)),
        ("7d", .seconds(604_800)),
        (" 2h ", .seconds(7_200)),
    ])
    func parses(text: String, expected: Duration) {
        #expect(Duration(configurationText: text) == expected)
    }

    @Test(arguments: ["", "5", "m", "5 m", "5w", "-5s", "1.5h", "99999999999999999999d"])
    func rejects(text: String) {
        #expect(Duration(configurationText: text) == nil)
    }

    @Test(arguments: [
        (Duration.seconds(300), "5m"),
        (.seconds(5_400), "1h30m"),
        (.milliseconds(1_500), "1s500ms"),
        (.zero, "0s"),
    ])
    func formats(duration: Duration, expected: String) {
        #expect(duration.configurationText == expected)
    }
}
