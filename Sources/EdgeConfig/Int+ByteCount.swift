extension Int {
    private static let byteCountUnits: [(suffix: String, bytes: Int)] = [
        ("B", 1),
        ("KB", 1_000), ("MB", 1_000_000), ("GB", 1_000_000_000),
        ("KiB", 1 << 10), ("MiB", 1 << 20), ("GiB", 1 << 30),
    ]

    /// Parses sizes written as `<integer>[unit]`: `"65536"`, `"512KiB"`, `"20MB"`, `"64MiB"`, `"1GB"`.
    /// KB, MB and GB are powers of 1000, KiB, MiB and GiB powers of 1024; no unit means bytes.
    init?(byteCountText text: String) {
        let trimmed = Substring(text.trimmingWhitespace())
        let digits = trimmed.prefix { $0.isASCII && $0.isNumber }
        let unitText = trimmed.dropFirst(digits.count).drop { $0 == " " }
        guard let amount = Int(digits) else {
            return nil
        }
        let multiplier = unitText.isEmpty ? 1 : Self.byteCountUnits.first { $0.suffix == unitText }?.bytes
        guard let multiplier else {
            return nil
        }
        let (bytes, overflow) = amount.multipliedReportingOverflow(by: multiplier)
        guard !overflow else {
            return nil
        }
        self = bytes
    }

    /// The shortest exact configuration text for this byte count, e.g. `"64MiB"` or `"20MB"`.
    var byteCountText: String {
        let unit = Self.byteCountUnits.filter { self != 0 && self % $0.bytes == 0 }.max { $0.bytes < $1.bytes }
        guard let unit, unit.bytes > 1 else {
            return "\(self)"
        }
        return "\(self / unit.bytes)\(unit.suffix)"
    }
}
