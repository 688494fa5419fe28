/// Why a string is not a valid pairing payload, or why a payload cannot be built.
public enum PairingPayloadError: Error, Equatable, Sendable {
    /// The string does not start with `edgegw://pair?`.
    case notAPairingPayload(String)
    /// The `v` parameter names a grammar this version does not know.
    case unsupportedVersion(String)
    /// A required parameter is absent.
    case missingParameter(String)
    /// A parameter appears more than once.
    case duplicateParameter(String)
    /// A parameter this version does not define.
    case unknownParameter(String)
    /// A query component is not `key=value`.
    case malformedParameter(String)
    /// A required value is empty.
    case emptyValue(key: String)
    /// A value contains a `%` not followed by two hex digits, or decodes to invalid UTF-8.
    case invalidPercentEncoding(key: String, value: String)
    /// A digest is not unpadded base64url.
    case invalidBase64(key: String, value: String)
    /// A digest decodes to the wrong number of bytes for its algorithm.
    case wrongDigestLength(key: String, expected: Int, found: Int)
    /// The port is not a number from 1 to 65535.
    case invalidPort(String)
    /// An address is neither an IP literal nor a DNS name.
    case invalidAddress(String)
    /// The address list is empty.
    case noAddress
    /// The node ID is not a lowercase canonical UUID.
    case invalidNodeID(String)
}

extension PairingPayloadError: CustomStringConvertible {
    public var description: String {
        switch self {
        case .notAPairingPayload(let text):
            return "not an EdgeGateway pairing payload (expected 'edgegw://pair?…'): '\(text.prefix(64))'"
        case .unsupportedVersion(let version):
            return "unsupported pairing payload version '\(version)'; this build reads version "
                + "\(PairingPayload.version). Update the app or the gateway."
        case .missingParameter(let key):
            return "the pairing payload has no '\(key)' parameter, which is required"
        case .duplicateParameter(let key):
            return "the pairing payload has the '\(key)' parameter more than once"
        case .unknownParameter(let key):
            return "the pairing payload has an unknown parameter '\(key)'; version "
                + "\(PairingPayload.version) defines v, a, p, db, s256, s1, n and id"
        case .malformedParameter(let component):
            return "the pairing payload component '\(component)' is not key=value"
        case .emptyValue(let key):
            return "the pairing payload's '\(key)' parameter is empty"
        case .invalidPercentEncoding(let key, let value):
            return
                "the pairing payload's '\(key)' value '\(value)' has an invalid percent-escape or is not UTF-8"
        case .invalidBase64(let key, let value):
            return
                "the pairing payload's '\(key)' digest '\(value)' is not unpadded base64url (A-Z a-z 0-9 - _)"
        case .wrongDigestLength(let key, let expected, let found):
            return "the pairing payload's '\(key)' digest has \(found) bytes; expected \(expected)"
        case .invalidPort(let port):
            return "the pairing payload's port '\(port)' is not a number from 1 to 65535"
        case .invalidAddress(let address):
            return "'\(address)' is neither an IP address (without zone) nor a DNS name"
        case .noAddress:
            return "the pairing payload lists no address"
        case .invalidNodeID(let text):
            return "the pairing payload's node ID '\(text.prefix(64))' is not a lowercase canonical UUID "
                + "(8-4-4-4-12 hex digits)"
        }
    }
}
