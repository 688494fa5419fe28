import SyncIdentifiers

extension RevisionID {
    /// LiteCore's stand-in for an ancestor missing from a pruned tree (spec §4.2):
    /// `<generation>-faded000` followed by 16 random hex digits.
    package static func fadedPlaceholder(
        generation: UInt32,
        using generator: inout some RandomNumberGenerator
    ) -> RevisionID {
        let random = UInt64.random(in: .min ... .max, using: &generator)
        return RevisionID(
            generation: max(generation, 1),
            digestBytes: [0xFA, 0xDE, 0xD0, 0x00] + withUnsafeBytes(of: random.bigEndian, Array.init))
    }
}
