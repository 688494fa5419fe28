import NIOCore
import NIOPosix

/// A failed TCP connection in words, for errors a person reads: each address tried and why, or the timeout.
/// The upstream dialer and the pairing kit's certificate probe both connect to addresses a person typed or scanned.
public enum ConnectionFailure {
    public static func describe(_ error: any Error) -> String {
        if let error = error as? NIOConnectionError {
            let attempts = error.connectionErrors.map { "\($0.target): \($0.error)" }
            return attempts.isEmpty ? "\(error)" : attempts.joined(separator: "; ")
        }
        if let error = error as? ChannelError, case .connectTimeout(let amount) = error {
            return "connection timed out after \(amount.nanoseconds / 1_000_000) ms"
        }
        return "\(error)"
    }
}
