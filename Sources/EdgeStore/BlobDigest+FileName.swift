import SyncIdentifiers

extension BlobDigest {
    /// Base64 contains `/`, so blob files are named by the hex form of the digest.
    var fileName: String {
        sha1.map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined() + ".blob"
    }

    init?(fileName: String) {
        guard fileName.hasSuffix(".blob") else { return nil }
        let hex = Array(fileName.dropLast(5).utf8)
        guard hex.count == 40 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(20)
        for index in stride(from: 0, to: 40, by: 2) {
            guard let byte = UInt8(String(decoding: hex[index..<index + 2], as: UTF8.self), radix: 16) else {
                return nil
            }
            bytes.append(byte)
        }
        self.init(sha1: bytes)
    }
}
