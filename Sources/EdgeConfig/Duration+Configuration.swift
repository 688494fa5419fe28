extension Duration {
    private static let configurationUnits: [(suffix: String, milliseconds: Int64)] = [
        ("ms", 1),
        ("s", 1_000),
        ("m", 60_000),
        ("h", 3_600_000),
        ("d", 86_400_000),
    ]

    /// Parses durations written as one or more `<integer><unit>` groups: `"250ms"`, `"300s"`,
    /// `"5m"`, `"1h30m"`, `"7d"`. Units: ms, s, m, h, d.
    init?(configurationText text: String) {
        var remaining = Substring(text.trimmingWhitespace())
        var milliseconds: Int64 = 0
        guard !remaining.isEmpty else {
            return nil
        }
        while !remaining.isEmpty {
            let digits = remaining.prefix(while: \.isASCIIDigitCharacter)
            remaining = remaining.dropFirst(digits.count)
            let unitText = remaining.prefix(while: \.isLetter)
            remaining = remaining.dropFirst(unitText.count)
            guard
                let amount = Int64(digits),
                let unit = Self.configurationUnits.first(where: { $0.suffix == unitText })
            else {
                return nil
            }
            let (product, productOverflow) = amount.multipliedReportingOverflow(
                by: unit.milliseconds)
            let (sum, sumOverflow) = milliseconds.addingReportingOverflow(product)
            guard !productOverflow, !sumOverflow else {
                return nil
            }
            milliseconds = sum
        }
        self = .milliseconds(milliseconds)
    }

    /// The shortest configuration text for this duration, e.g. `"300s"` or `"1h30m"`.
    var configurationText: String {
        var remaining = components.seconds * 1_000 + components.attoseconds / 1_000_000_000_000_000
        guard remaining > 0 else {
            return "0s"
        }
        var text = ""
        for unit in Self.configurationUnits.reversed() where remaining >= unit.milliseconds {
            text += "\(remaining / unit.milliseconds)\(unit.suffix)"
            remaining %= unit.milliseconds
        }
        return text
    }
}

extension Character {
    fileprivate var isASCIIDigitCharacter: Bool {
        isASCII && isNumber
    }
}
