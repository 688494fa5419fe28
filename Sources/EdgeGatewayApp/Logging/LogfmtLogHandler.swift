import Foundation
import Logging

/// One line per event in logfmt (`time=… level=… label=… msg="…" key=value`), which `docker logs`, journald and
/// log shippers all take as is, on standard error so that standard output stays free for command results.
package struct LogfmtLogHandler: LogHandler {
    package var logLevel: Logger.Level
    package var metadata: Logger.Metadata = [:]
    package var metadataProvider: Logger.MetadataProvider?
    private let label: String
    private let write: @Sendable (String) -> Void

    package init(
        label: String, level: Logger.Level, write: @escaping @Sendable (String) -> Void = Self.writeToStandardError
    ) {
        self.label = label
        self.logLevel = level
        self.write = write
    }

    package subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    package func log(event: LogEvent) {
        var merged = metadata
        if let provided = metadataProvider?.get() {
            merged.merge(provided) { _, new in new }
        }
        if let extra = event.metadata {
            merged.merge(extra) { _, new in new }
        }
        var line =
            "time=\(Self.timestamp()) level=\(event.level.rawValue) label=\(Self.quoted(label)) msg=\(Self.quoted("\(event.message)"))"
        for key in merged.keys.sorted() {
            line += " \(key)=\(Self.quoted("\(merged[key]!)"))"
        }
        write(line + "\n")
    }

    @Sendable package static func writeToStandardError(_ line: String) {
        FileHandle.standardError.write(Data(line.utf8))
    }

    /// Values are quoted only when they need to be, so that simple values stay greppable.
    static func quoted(_ value: String) -> String {
        let needsQuoting =
            value.isEmpty || value.contains { $0 == " " || $0 == "\"" || $0 == "=" || $0.isNewline || $0 == "\\" }
        guard needsQuoting else { return value }
        var escaped = ""
        for character in value {
            switch character {
            case "\"": escaped += "\\\""
            case "\\": escaped += "\\\\"
            case "\n": escaped += "\\n"
            case "\r": escaped += "\\r"
            default: escaped.append(character)
            }
        }
        return "\"\(escaped)\""
    }

    private static func timestamp() -> String {
        Date.now.formatted(
            .iso8601.year().month().day().time(includingFractionalSeconds: true).timeZone(separator: .omitted))
    }
}
