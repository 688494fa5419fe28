import EdgeGatewayTestSupport
import EdgePairing
import Foundation
import Testing

@Suite("QR code and renderings")
struct QRCodeTests {
    static let payloadText = try! PairingPayloadTests.sample().uriString

    @Test("libqrencode picks the smallest version at level M")
    func matrix() throws {
        let code = try QRCode(encoding: "HELLO")
        #expect(code.version == 1)
        #expect(code.size == 21)
        #expect(code.modules.count == 21 * 21)
        // The top-left finder pattern: a dark 7×7 ring around a light ring around a dark 3×3 core.
        #expect(code.isDark(row: 0, column: 0) && code.isDark(row: 6, column: 6))
        #expect(!code.isDark(row: 1, column: 1) && code.isDark(row: 3, column: 3))
        #expect(!code.isDark(row: -1, column: 0) && !code.isDark(row: 0, column: 21))
        let payloadCode = try QRCode(encoding: Self.payloadText)
        // The node ID's 40 bytes (`&id=` and a canonical UUID) took the sample from version 8 to 10 (57×57
        // modules), still far below what phone cameras read off a screen.
        #expect(payloadCode.version <= 10, "a pairing payload should stay a small code")
    }

    @Test("text too long for any QR code is a clear error")
    func tooLong() {
        let text = String(repeating: "x", count: 3000)
        #expect(throws: QRCodeError.textTooLong(byteCount: 3000)) { try QRCode(encoding: text) }
        #expect(throws: QRCodeError.textContainsNUL) { try QRCode(encoding: "a\u{0}b") }
    }

    @Test("PNG files are well-formed: signature, IHDR, IDAT, IEND with valid sizes")
    func pngStructure() throws {
        let png = try PNGEncoder.grayscale(width: 3, height: 2, pixels: [0, 128, 255, 255, 128, 0])
        #expect(Array(png.prefix(8)) == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        #expect(String(decoding: png[12..<16], as: UTF8.self) == "IHDR")
        #expect(Array(png[16..<24]) == [0, 0, 0, 3, 0, 0, 0, 2])
        #expect(String(decoding: png.suffix(8).prefix(4), as: UTF8.self) == "IEND")
        // The CRC of an empty IEND chunk is a well-known constant.
        #expect(Array(png.suffix(4)) == [0xAE, 0x42, 0x60, 0x82])
        #expect(throws: PNGEncodingError.invalidDimensions(width: 2, height: 2, pixelCount: 3)) {
            try PNGEncoder.grayscale(width: 2, height: 2, pixels: [0, 0, 0])
        }
    }

    @Test("the SVG path covers exactly the dark modules")
    func svgModules() throws {
        let code = try QRCode(encoding: Self.payloadText)
        let svg = code.svgRendering(quietZone: 4)
        #expect(svg.hasPrefix("<svg xmlns=\"http://www.w3.org/2000/svg\""))
        #expect(svg.components(separatedBy: "<path").count == 2)
        let side = code.size + 8
        #expect(svg.contains("viewBox=\"0 0 \(side) \(side)\""))
        let pathData = try #require(svg.split(separator: "d=\"").last?.split(separator: "\"").first)
        var painted = Set<Int>()
        for rectangle in pathData.split(separator: "z") {
            // "M<x> <y>h<n>v1h-<n>"
            let numbers = rectangle.split(whereSeparator: { !$0.isNumber }).compactMap { Int($0) }
            let (x, y, length) = (numbers[0] - 4, numbers[1] - 4, numbers[2])
            for column in x..<(x + length) { painted.insert(y * code.size + column) }
        }
        let dark = Set(code.modules.indices.filter { code.modules[$0] })
        #expect(painted == dark)
    }

    @Test(
        "a PNG rendering decodes with zxing to the payload",
        .enabled(if: ZXingReader.isAvailable, Comment(rawValue: ZXingReader.unavailableReason))
    )
    func pngDecodes() async throws {
        let code = try QRCode(encoding: Self.payloadText)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent(
            "qr-\(UUID().uuidString).png")
        defer { try? FileManager.default.removeItem(at: file) }
        try Data(code.pngRendering(scale: 4)).write(to: file)
        #expect(try await ZXingReader.decode(imageAt: file.path) == Self.payloadText)
    }

    @Test(
        "the terminal rendering, read back as a picture, decodes with zxing to the payload",
        .enabled(if: ZXingReader.isAvailable, Comment(rawValue: ZXingReader.unavailableReason))
    )
    func terminalDecodes() async throws {
        let code = try QRCode(encoding: Self.payloadText)
        let rendering = code.terminalRendering()
        let bitmap = try TerminalBitmap(rendering: rendering)
        // The quiet zone is part of the rendering, so the image needs no extra margin.
        #expect(bitmap.width == code.size + 8)
        #expect((0..<bitmap.width).allSatisfy { !bitmap.isDark(row: 0, column: $0) })
        let png = try QRCode.png(size: bitmap.width, quietZone: 0, scale: 4) { row, column in
            bitmap.isDark(row: row, column: column)
        }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent(
            "qr-\(UUID().uuidString).png")
        defer { try? FileManager.default.removeItem(at: file) }
        try Data(png).write(to: file)
        #expect(try await ZXingReader.decode(imageAt: file.path) == Self.payloadText)
    }

    @Test("forced colours wrap each line in white-on-black SGR codes around the same glyphs")
    func forcedColours() throws {
        let code = try QRCode(encoding: "HELLO")
        let plain = code.terminalRendering().split(separator: "\n")
        let forced = code.terminalRendering(colors: .forcedBlackAndWhite).split(separator: "\n")
        #expect(forced == plain.map { "\u{1B}[97;40m\($0)\u{1B}[0m"[...] })
    }
}
