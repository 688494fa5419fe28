import Foundation

/// Decodes QR codes in image files with zxing-cpp through python3, an independent reader: what a phone camera
/// app would do with the same pixels.
package enum ZXingReader {
    /// Why QR round-trip tests are skipped when the reader is missing.
    package static let unavailableReason =
        "needs python3 with zxing-cpp and pillow (pip install zxing-cpp pillow numpy; scripts/dev test installs them)"

    package static let isAvailable: Bool =
        (try? runExternalToolBlocking("python3", ["-c", "import zxingcpp, PIL"]))?.status == 0

    /// `try_invert=False`: phone camera apps often refuse light-on-dark codes, so an inverted rendering must fail.
    private static let script = """
        import sys, zxingcpp
        from PIL import Image
        image = Image.open(sys.argv[1])
        results = zxingcpp.read_barcodes(image, formats=zxingcpp.BarcodeFormat.QRCode, try_invert=False)
        if len(results) != 1:
            sys.exit("found %d QR codes" % len(results))
        sys.stdout.write(results[0].text)
        """

    package struct DecodingFailed: Error, CustomStringConvertible {
        package let description: String
    }

    /// The text of the one QR code in the image at `path`.
    package static func decode(imageAt path: String) async throws -> String {
        let outcome = try await runExternalTool("python3", ["-c", script, path])
        guard outcome.status == 0 else {
            throw DecodingFailed(description: "zxing could not decode \(path): \(outcome.error)")
        }
        return outcome.output
    }
}
