extension QRCode {
    /// The code as a standalone SVG: a white background and one path of black modules, in module units so any
    /// display size stays sharp.
    ///
    /// Each horizontal run of dark modules is one rectangle of the path, which keeps the file small.
    package func svgRendering(quietZone: Int = QRCode.standardQuietZone, moduleSize: Int = 8) -> String {
        let side = self.size + 2 * quietZone
        var path = ""
        for row in 0..<self.size {
            var column = 0
            while column < self.size {
                guard self.isDark(row: row, column: column) else {
                    column += 1
                    continue
                }
                let start = column
                while column < self.size, self.isDark(row: row, column: column) { column += 1 }
                let length = column - start
                path += "M\(start + quietZone) \(row + quietZone)h\(length)v1h-\(length)z"
            }
        }
        let pixels = side * max(moduleSize, 1)
        return """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(pixels)" height="\(pixels)" \
            viewBox="0 0 \(side) \(side)" shape-rendering="crispEdges">\
            <rect width="\(side)" height="\(side)" fill="#fff"/>\
            <path fill="#000" d="\(path)"/></svg>

            """
    }
}
