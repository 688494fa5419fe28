/// A text that is not a collection name. The reason is typed so that each layer can tell a malformed text from a
/// well-formed name that breaks a naming rule: the replication protocol refuses the first and answers the second as
/// a collection it does not serve.
package struct InvalidCollectionName: Error, Hashable, Sendable, CustomStringConvertible {
    package enum Reason: Hashable, Sendable, CustomStringConvertible {
        case tooManyParts
        case emptyPart
        case tooLong
        case reservedFirstCharacter
        case defaultCollectionOutsideDefaultScope
        case disallowedCharacter

        package var description: String {
            switch self {
            case .tooManyParts: "expected 'scope.collection' or 'collection'"
            case .emptyPart: "scope and collection names must not be empty"
            case .tooLong: "names are limited to 251 characters"
            case .reservedFirstCharacter: "names must not start with '_' or '%' (except '_default')"
            case .defaultCollectionOutsideDefaultScope: "the '_default' collection exists only in the '_default' scope"
            case .disallowedCharacter: "only letters, digits, '_', '-' and '%' are allowed"
            }
        }
    }

    /// The text as given when it has too many parts, else `scope.collection` with the default scope written out.
    package let text: String
    package let reason: Reason

    package var description: String { "invalid collection name '\(text)': \(reason)" }
}
