extension QRCode {
    /// How a terminal rendering relates glyphs to module colours.
    package enum TerminalColors: Sendable {
        /// Glyphs are the light modules, spaces the dark ones, with no escape sequences: dark-on-light on a
        /// terminal whose background is darker than its text (the common theme), inverted on a light theme.
        case lightGlyphsOnTerminalBackground
        /// The same glyphs, wrapped in ANSI SGR codes for bright-white text on a black background, so the code is
        /// dark-on-light whatever the theme. For terminals only, not for files.
        case forcedBlackAndWhite
    }

    /// The code as lines of UTF-8 half blocks, two module rows per line, with a quiet zone of `quietZone` modules.
    ///
    /// Phone cameras expect dark modules on a light field, and many refuse inverted codes. A terminal only lets
    /// us paint its foreground colour, so the glyphs draw the *light* modules and the quiet zone, and the dark
    /// modules are left as background: on the usual dark terminal background that is dark-on-light.
    /// ``TerminalColors/forcedBlackAndWhite`` pins the two colours for light themes.
    ///
    /// `█` is a light upper and lower module, `▀` light upper only, `▄` light lower only, space both dark.
    /// When the height is odd, the last line's lower half is outside the code and left as background.
    package func terminalRendering(
        quietZone: Int = QRCode.standardQuietZone,
        colors: TerminalColors = .lightGlyphsOnTerminalBackground
    ) -> String {
        let span = -quietZone..<(self.size + quietZone)
        var lines: [String] = []
        for upperRow in stride(from: span.lowerBound, to: span.upperBound, by: 2) {
            let hasLowerRow = upperRow + 1 < span.upperBound
            var line = ""
            for column in span {
                let upperLight = !self.isDark(row: upperRow, column: column)
                let lowerLight = hasLowerRow && !self.isDark(row: upperRow + 1, column: column)
                switch (upperLight, lowerLight) {
                case (true, true): line += "█"
                case (true, false): line += "▀"
                case (false, true): line += "▄"
                case (false, false): line += " "
                }
            }
            switch colors {
            case .lightGlyphsOnTerminalBackground:
                lines.append(line)
            case .forcedBlackAndWhite:
                lines.append("\u{1B}[97;40m" + line + "\u{1B}[0m")
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
