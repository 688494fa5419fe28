import CQREncode

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Why a QR code could not be made.
package enum QRCodeError: Error, Equatable, Sendable {
    /// The text does not fit in the largest QR code (version 40) at the chosen error-correction level.
    case textTooLong(byteCount: Int)
    /// The text contains a NUL byte, which libqrencode's C-string interface cannot carry.
    case textContainsNUL
    /// libqrencode failed for another reason (the `errno` it left).
    case encodingFailed(errno: Int32)
}

extension QRCodeError: CustomStringConvertible {
    package var description: String {
        switch self {
        case .textTooLong(let byteCount):
            return "\(byteCount) bytes do not fit in a QR code with error-correction level M"
        case .textContainsNUL:
            return "a QR code's text must not contain a NUL character"
        case .encodingFailed(let code):
            return "libqrencode could not encode the text: \(String(cString: strerror(code)))"
        }
    }
}

/// A QR code's module matrix, encoded by libqrencode.
///
/// Error-correction level M (about 15 % of the symbol recoverable) is what phone cameras read reliably from a
/// screen with glare or moiré, while keeping a pairing payload at version 6–8; level H would make it larger and
/// harder to scan on a small terminal. The version is the smallest that fits.
package struct QRCode: Sendable, Equatable {
    /// The QR version (1–40); the matrix is `17 + 4 × version` modules wide.
    package let version: Int
    /// Modules per side.
    package let size: Int
    /// Row-major, `true` for a dark module.
    package let modules: [Bool]

    /// Encodes `text` (case-sensitive; non-alphanumeric parts in 8-bit mode).
    package init(encoding text: String) throws(QRCodeError) {
        guard !text.utf8.contains(0) else { throw .textContainsNUL }
        errno = 0
        guard let symbol = QRcode_encodeString(text, 0, QR_ECLEVEL_M, QR_MODE_8, 1) else {
            let code = errno
            throw code == ERANGE ? .textTooLong(byteCount: text.utf8.count) : .encodingFailed(errno: code)
        }
        defer { QRcode_free(symbol) }
        let width = Int(symbol.pointee.width)
        // Bit 0 of each byte is the module's colour; the other bits describe its role (finder, timing…).
        let data = UnsafeBufferPointer(start: symbol.pointee.data, count: width * width)
        self.version = Int(symbol.pointee.version)
        self.size = width
        self.modules = data.map { $0 & 1 == 1 }
    }

    /// Whether the module at `row`, `column` is dark; modules outside the symbol (the quiet zone) are light.
    package func isDark(row: Int, column: Int) -> Bool {
        guard (0..<self.size).contains(row), (0..<self.size).contains(column) else { return false }
        return self.modules[row * self.size + column]
    }

    /// The light margin every reader needs around the symbol, in modules (ISO/IEC 18004).
    package static let standardQuietZone = 4
}
