import Foundation
import HexEncoding

extension PairingPayload {
    private static let knownKeys: Set<String> = ["v", "a", "p", "db", "s256", "s1", "n", "id"]

    /// Parses a payload strictly: see the grammar on ``PairingPayload``.
    public init(decoding text: String) throws(PairingPayloadError) {
        let prefix = "\(Self.scheme)://\(Self.host)?"
        guard text.hasPrefix(prefix) else { throw .notAPairingPayload(text) }
        var parameters: [String: String] = [:]
        for component in text.dropFirst(prefix.count).split(
            separator: "&", omittingEmptySubsequences: false)
        {
            guard let equals = component.firstIndex(of: "=") else {
                throw .malformedParameter(String(component))
            }
            let key = String(component[..<equals])
            guard Self.knownKeys.contains(key) else {
                throw key.isEmpty ? .malformedParameter(String(component)) : .unknownParameter(key)
            }
            guard parameters[key] == nil else { throw .duplicateParameter(key) }
            parameters[key] = String(component[component.index(after: equals)...])
        }
        // The version is checked first: a later version may change every other parameter.
        let version = try Self.required("v", in: parameters)
        guard version == String(Self.version) else { throw .unsupportedVersion(version) }

        let addressList = try Self.required("a", in: parameters)
        let addresses = try addressList.split(separator: ",", omittingEmptySubsequences: false).map {
            (encoded) throws(PairingPayloadError) -> String in
            let address = try Self.percentDecoded(String(encoded), key: "a")
            guard Self.isValidAddress(address) else { throw .invalidAddress(address) }
            return address
        }
        let portText = try Self.required("p", in: parameters)
        guard portText.utf8.count <= 5, portText.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
            let port = Int(portText), (1...65535).contains(port)
        else {
            throw .invalidPort(portText)
        }
        let database = try Self.percentDecoded(try Self.required("db", in: parameters), key: "db")
        let nodeName = try Self.percentDecoded(try Self.required("n", in: parameters), key: "n")
        let nodeIDText = try Self.required("id", in: parameters)
        // Only the lowercase canonical form is accepted, so that an ID has one spelling.
        guard nodeIDText.utf8.count == 36, nodeIDText == nodeIDText.lowercased(),
            let nodeID = UUID(uuidString: nodeIDText)
        else {
            throw .invalidNodeID(nodeIDText)
        }
        let sha256 = try Self.digest("s256", in: parameters, length: 32)
        let sha1: [UInt8]? =
            parameters["s1"] == nil ? nil : try Self.digest("s1", in: parameters, length: 20)
        try self.init(
            addresses: addresses,
            port: port,
            database: database,
            certificateSHA256: sha256,
            certificateSHA1: sha1,
            nodeName: nodeName,
            nodeID: nodeID
        )
    }

    private static func required(_ key: String, in parameters: [String: String])
        throws(PairingPayloadError)
        -> String
    {
        guard let value = parameters[key] else {
            throw .missingParameter(key)
        }
        guard !value.isEmpty else { throw .emptyValue(key: key) }
        return value
    }

    private static func digest(_ key: String, in parameters: [String: String], length: Int)
        throws(PairingPayloadError) -> [UInt8]
    {
        let text = try Self.required(key, in: parameters)
        guard let bytes = Base64URL.decode(text) else { throw .invalidBase64(key: key, value: text) }
        guard bytes.count == length else {
            throw .wrongDigestLength(key: key, expected: length, found: bytes.count)
        }
        return bytes
    }

    static func percentDecoded(_ value: String, key: String) throws(PairingPayloadError) -> String {
        let input = Array(value.utf8)
        var output: [UInt8] = []
        output.reserveCapacity(input.count)
        var index = 0
        while index < input.count {
            let byte = input[index]
            if byte == UInt8(ascii: "%") {
                guard index + 2 < input.count,
                    let high = HexDigits.value(of: input[index + 1]), let low = HexDigits.value(of: input[index + 2])
                else {
                    throw .invalidPercentEncoding(key: key, value: value)
                }
                output.append(high << 4 | low)
                index += 3
            } else {
                guard Self.literalCharacters.contains(byte) else {
                    throw .invalidPercentEncoding(key: key, value: value)
                }
                output.append(byte)
                index += 1
            }
        }
        // Decoding replaces invalid UTF-8 with U+FFFD, so a lossless round trip proves validity.
        let decoded = String(decoding: output, as: UTF8.self)
        guard Array(decoded.utf8) == output else {
            throw .invalidPercentEncoding(key: key, value: value)
        }
        return decoded
    }
}
