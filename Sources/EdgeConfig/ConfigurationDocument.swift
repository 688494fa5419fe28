import TOMLKit

/// One TOML document being decoded: the name errors cite, where its keys are, and the directory
/// relative file paths in it are resolved against.
package struct ConfigurationDocument: Sendable {
    let name: String
    let locator: SourceLineLocator
    let baseDirectory: String

    /// Parses `text`; a syntax error becomes a ``ConfigurationError`` with TOMLKit's line and column.
    package static func parse(
        _ text: String,
        name: String,
        baseDirectory: String
    ) throws -> (document: ConfigurationDocument, root: SettingsTable) {
        do throws(TOMLParserGuard.Refusal) {
            try TOMLParserGuard.check(text)
        } catch {
            throw ConfigurationError(
                source: name, line: error.line, column: error.column, message: "TOML syntax error: \(error.message)")
        }
        let table: TOMLTable
        do {
            table = try TOMLTable(string: text)
        } catch let error as TOMLParseError {
            throw ConfigurationError(
                source: name,
                line: error.source.begin.line,
                column: error.source.begin.column,
                message: "TOML syntax error: \(error.description)"
            )
        }
        let document = ConfigurationDocument(
            name: name,
            locator: SourceLineLocator(source: text),
            baseDirectory: baseDirectory
        )
        return (document, SettingsTable(table: table, document: document))
    }
}
