extension String {
    /// The text as HTML character data or a quoted attribute value: the five characters that could end either,
    /// or start markup, become references.
    var htmlEscaped: String {
        var escaped = ""
        escaped.reserveCapacity(utf8.count)
        for character in unicodeScalars {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&#39;"
            default: escaped.unicodeScalars.append(character)
            }
        }
        return escaped
    }
}
