import Foundation

/// This gateway's permanent identifier: a random UUID generated on first start and kept in the data directory,
/// so that devices and peers recognise the node across renames, address changes and certificate rotations.
///
/// It is published in DNS-SD TXT records (`id=`) and pairing payloads (`id=`), always in the lowercase
/// canonical form.
public struct NodeID: Sendable, Hashable, CustomStringConvertible {
    package let uuid: UUID

    package init(uuid: UUID) {
        self.uuid = uuid
    }

    /// Parses exactly the canonical form `description` produces (36 lowercase characters), so an ID has one
    /// spelling.
    package init?(canonical text: String) {
        guard text.utf8.count == 36, text == text.lowercased(), let uuid = UUID(uuidString: text) else {
            return nil
        }
        self.uuid = uuid
    }

    public var description: String {
        uuid.uuidString.lowercased()
    }
}

/// Why the node ID file could not be read or created. Start-up stops on any of these: replacing an unreadable
/// ID would make every device and peer see a different node.
package enum NodeIDError: Error, Equatable, CustomStringConvertible {
    case unreadable(path: String, reason: String)
    case corrupt(path: String)
    case notWritable(path: String, reason: String)

    package var description: String {
        switch self {
        case .unreadable(let path, let reason):
            "cannot read the node ID file \(path): \(reason). It is not regenerated, because peers and paired "
                + "devices know the node by it: make it a readable file again or restore it from a backup"
        case .corrupt(let path):
            "the node ID file \(path) does not hold a UUID (one lowercase canonical UUID and a newline). "
                + "Restore it from a backup, or delete it to give this node a new ID"
        case .notWritable(let path, let reason):
            "cannot create the node ID file \(path): \(reason)"
        }
    }
}
