extension DatabaseSettings {
    static let keys = [
        "name", "collections", "max_revision_tree_depth", "keep_revision_bodies",
        "keep_revision_bodies_for",
    ]

    /// Written as `keep_revision_bodies_for` to lift the age limit.
    static let unlimitedAge = "forever"

    init(decoding table: SettingsTable, name: String) throws {
        try table.rejectUnknownKeys(allowed: Self.keys)
        let defaults = DeltaRetention()
        let maximumAge: Duration?
        if table.table["keep_revision_bodies_for"]?.string == Self.unlimitedAge {
            maximumAge = nil
        } else {
            maximumAge = try table.duration("keep_revision_bodies_for") ?? defaults.maximumAge
        }
        self.init(
            name: name,
            collections: try table.collectionNames("collections") ?? [.default],
            maxRevisionTreeDepth: try table.integer("max_revision_tree_depth", in: 1...10_000)
                ?? 20,
            deltaRetention: DeltaRetention(
                revisionBodies: try table.integer("keep_revision_bodies", in: 0...10_000)
                    ?? defaults.revisionBodies,
                maximumAge: maximumAge
            )
        )
    }
}
