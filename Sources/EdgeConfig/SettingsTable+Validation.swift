import SyncIdentifiers

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Accessors for values with a format: entry names, addresses, collection names.
extension SettingsTable {
    /// The `name` of a `[[database]]`, `[[listener]]` or `[[upstream]]`. Restricted so it can be
    /// used in URLs and embedded in `EDGE_GATEWAY_<KIND>_<NAME>_…` variable names.
    func entryName() throws -> String {
        let name = try requiredString("name")
        let isValid =
            name.utf8.count <= 64
            && name.first.map { $0.isASCII && ($0.isLetter || $0.isNumber) } == true
            && name.allSatisfy {
                $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_")
            }
        guard isValid else {
            throw error(
                at: "name",
                "\"\(name)\" must start with a letter or digit and contain only letters, digits, '-' and '_' (at most 64)"
            )
        }
        return name
    }

    /// A numeric IPv4 or IPv6 address.
    func ipAddress(_ key: String) throws -> String? {
        guard let text = try string(key) else {
            return nil
        }
        guard Self.isIPAddress(text) else {
            throw error(
                at: key,
                "must be an IPv4 or IPv6 address such as \"127.0.0.1\" or \"::1\", got \"\(text)\"")
        }
        return text
    }

    /// A numeric IP address or a network interface name such as `eth0`.
    func ipAddressOrInterfaceName(_ key: String) throws -> String? {
        guard let text = try string(key) else {
            return nil
        }
        guard Self.isIPAddress(text) || Self.isInterfaceName(text) else {
            throw error(
                at: key,
                "must be an IP address such as \"0.0.0.0\" or an interface name such as \"eth0\", got \"\(text)\""
            )
        }
        return text
    }

    /// `scope.collection` names, each listed once.
    ///
    /// Couchbase rules: 1–251 characters of letters, digits, `_`, `-`, `%`; not starting with `_`
    /// or `%` except `_default`; the `_default` collection exists only in the `_default` scope.
    func collectionNames(_ key: String) throws -> [CollectionName]? {
        guard let names = try uniqueStringArray(key) else {
            return nil
        }
        guard !names.isEmpty else {
            throw error(
                at: key, "must list at least one collection",
                allowed: [CollectionName.default.qualifiedName])
        }
        var collections: [CollectionName] = []
        for (index, name) in names.enumerated() {
            // The configuration always writes the scope; the name rules are those of every other layer.
            let parts = name.split(separator: ".", omittingEmptySubsequences: false)
            let brokenRule: String
            if parts.count == 2 {
                do throws(InvalidCollectionName) {
                    collections.append(try CollectionName(scope: String(parts[0]), name: String(parts[1])))
                    continue
                } catch {
                    brokenRule = error.reason.description
                }
            } else {
                brokenRule = "expected 'scope.collection'"
            }
            throw error(
                at: key,
                element: index,
                "\"\(name)\" is not a collection name (\(brokenRule)); write \"scope.collection\" using letters, "
                    + "digits, '_', '-' and '%' (\"_default._default\" is the default collection)"
            )
        }
        return collections
    }

    static func isIPAddress(_ text: String) -> Bool {
        var storage = in6_addr()
        return inet_pton(AF_INET, text, &storage) == 1 || inet_pton(AF_INET6, text, &storage) == 1
    }

    /// Linux limits interface names to 15 bytes; letters, digits and `_ . : -` cover eth0,
    /// enp3s0, wlan0, br-lan, eth0.100 and alias forms such as eth0:1.
    private static func isInterfaceName(_ text: String) -> Bool {
        text.utf8.count <= 15
            && text.first.map { $0.isASCII && $0.isLetter } == true
            && text.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "_.:-".contains($0)) }
    }
}
