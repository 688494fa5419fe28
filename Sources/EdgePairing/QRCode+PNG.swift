extension QRCode {
    /// The code as a grayscale PNG, black modules on white, each module `scale`×`scale` pixels.
    package func pngRendering(
        quietZone: Int = QRCode.standardQuietZone,
        scale: Int = 8
    ) throws(PNGEncodingError) -> [UInt8] {
        try Self.png(size: self.size, quietZone: quietZone, scale: scale) { row, column in
            self.isDark(row: row, column: column)
        }
    }

    /// A PNG of any square module bitmap, e.g. one read back from another rendering.
    package static func png(
        size: Int,
        quietZone: Int,
        scale: Int,
        isDark: (_ row: Int, _ column: Int) -> Bool
    ) throws(PNGEncodingError) -> [UInt8] {
        let margin = max(quietZone, 0)
        let modules = size + 2 * margin
        guard scale >= 1, modules >= 1 else {
            throw .invalidDimensions(width: modules * scale, height: modules * scale, pixelCount: 0)
        }
        let side = modules * scale
        var pixels = [UInt8](repeating: 255, count: side * side)
        for row in 0..<modules {
            for column in 0..<modules where isDark(row - margin, column - margin) {
                for y in (row * scale)..<((row + 1) * scale) {
                    let start = y * side + column * scale
                    for x in start..<(start + scale) { pixels[x] = 0 }
                }
            }
        }
        return try PNGEncoder.grayscale(width: side, height: side, pixels: pixels)
    }
}
