/// A terminal rendering turned back into modules, the way a camera sees it on a dark-background terminal: glyph
/// halves are light, background is dark.
package struct TerminalBitmap {
    package struct UnexpectedCharacter: Error { package let character: Character }

    package let width: Int
    private var rows: [[Bool]] = []

    package init(rendering: String) throws {
        let lines = rendering.split(separator: "\n")
        width = lines.first?.count ?? 0
        for line in lines {
            var upper: [Bool] = []
            var lower: [Bool] = []
            for character in line {
                switch character {
                case "█":
                    upper.append(false)
                    lower.append(false)
                case "▀":
                    upper.append(false)
                    lower.append(true)
                case "▄":
                    upper.append(true)
                    lower.append(false)
                case " ":
                    upper.append(true)
                    lower.append(true)
                default: throw UnexpectedCharacter(character: character)
                }
            }
            rows.append(upper)
            rows.append(lower)
        }
        // An odd module count leaves the last lower half outside the code.
        if rows.count > width { rows.removeLast(rows.count - width) }
    }

    package func isDark(row: Int, column: Int) -> Bool {
        rows.indices.contains(row) && rows[row].indices.contains(column) && rows[row][column]
    }
}
