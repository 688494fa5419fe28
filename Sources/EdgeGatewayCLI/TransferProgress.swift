import Foundation

/// The bar both `replicate` and `db import`/`db export` draw: `#` for the done part of 30 columns.
enum ProgressBar {
    static let width = 30

    static func render(fraction: Double) -> String {
        let filled = max(0, min(width, Int(fraction * Double(width))))
        return "[" + String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled) + "]"
    }
}

/// Progress of an import or export on standard error, so that an export's standard output stays pure JSON
/// Lines: on a terminal the bar redrawn in place with rate and ETA, at most ten times a second; otherwise a
/// plain line every few seconds, for logs.
final class TransferProgress {
    private let verb: String
    private let total: Int?
    private let isTerminal: Bool
    private let start = ContinuousClock.now
    private var lastDrawn: ContinuousClock.Instant?

    init(verb: String, total: Int?, isTerminal: Bool) {
        self.verb = verb
        self.total = total
        self.isTerminal = isTerminal
    }

    /// `fraction` is how much of the work is done when the total is not a document count (an import knows the
    /// file's size, not its number of lines).
    func show(completed: Int, fraction: Double? = nil) {
        let now = ContinuousClock.now
        let interval: Duration = isTerminal ? .milliseconds(100) : .seconds(5)
        if let lastDrawn, now - lastDrawn < interval { return }
        lastDrawn = now
        draw(completed: completed, fraction: fraction, at: now)
    }

    func finish(completed: Int) {
        draw(completed: completed, fraction: 1, at: .now)
        if isTerminal { FileHandle.standardError.write(Data("\n".utf8)) }
    }

    private func draw(completed: Int, fraction: Double?, at now: ContinuousClock.Instant) {
        let elapsed = Double((now - start).components.seconds) + Double((now - start).components.attoseconds) / 1e18
        let rate = elapsed > 0 ? Double(completed) / elapsed : 0
        let done = fraction ?? total.map { $0 > 0 ? Double(completed) / Double($0) : 1 }
        var line = "\(completed)\(total.map { "/\($0)" } ?? "") documents \(verb), \(Int(rate.rounded())) docs/s"
        if let done, done > 0, done < 1 {
            line += ", ETA \(Self.clock(seconds: elapsed * (1 - done) / done))"
        }
        if isTerminal {
            let bar = ProgressBar.render(fraction: done ?? 0)
            FileHandle.standardError.write(Data("\r\u{1B}[2K\(bar) \(line)".utf8))
        } else {
            FileHandle.standardError.write(Data((line + "\n").utf8))
        }
    }

    private static func clock(seconds: Double) -> String {
        let whole = Int(seconds.rounded(.up))
        return whole >= 3600
            ? String(format: "%d:%02d:%02d", whole / 3600, whole / 60 % 60, whole % 60)
            : String(format: "%d:%02d", whole / 60, whole % 60)
    }
}
