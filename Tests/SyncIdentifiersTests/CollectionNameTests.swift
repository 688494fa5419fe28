import Testing

@testable import SyncIdentifiers

@Suite("Collection names")
struct CollectionNameTests {
    @Test("The qualified form always writes the scope; the wire form leaves the default scope out")
    func textualForms() throws {
        #expect(CollectionName.default.qualifiedName == "_default._default")
        #expect(CollectionName.default.wireName == "_default")
        let inDefaultScope = try CollectionName(scope: "_default", name: "orders")
        #expect(inDefaultScope.qualifiedName == "_default.orders")
        #expect(inDefaultScope.wireName == "orders")
        let scoped = try CollectionName(scope: "store", name: "orders")
        #expect(scoped.qualifiedName == "store.orders")
        #expect(scoped.wireName == "store.orders")
        for collection in [CollectionName.default, inDefaultScope, scoped] {
            #expect(collection.description == collection.qualifiedName)
            #expect("\(collection)" == collection.qualifiedName)
        }
    }

    @Test("Both forms parse back to the same name")
    func parsing() throws {
        #expect(try CollectionName(parsing: "_default") == .default)
        #expect(try CollectionName(parsing: "_default._default") == .default)
        #expect(try CollectionName(parsing: "_default").isDefault)
        #expect(try !CollectionName(parsing: "_default.orders").isDefault)
        #expect(try CollectionName(parsing: "coll") == CollectionName(scope: "_default", name: "coll"))
        #expect(
            try CollectionName(parsing: "inventory.airline-1%")
                == CollectionName(scope: "inventory", name: "airline-1%"))
        for text in ["_default", "orders", "_default.orders", "store.orders", "A-z_0%9.x"] {
            let collection = try CollectionName(parsing: text)
            #expect(try CollectionName(parsing: collection.qualifiedName) == collection)
            #expect(try CollectionName(parsing: collection.wireName) == collection)
        }
        let longest = String(repeating: "x", count: 251)
        #expect(try CollectionName(parsing: "\(longest).\(longest)").name == longest)
    }

    @Test(
        "Each of Couchbase's naming rules rejects",
        arguments: [
            ("a.b.c", InvalidCollectionName(text: "a.b.c", reason: .tooManyParts)),
            ("", InvalidCollectionName(text: "_default.", reason: .emptyPart)),
            (".x", InvalidCollectionName(text: ".x", reason: .emptyPart)),
            ("x.", InvalidCollectionName(text: "x.", reason: .emptyPart)),
            // An empty part is reported before any other rule a part breaks.
            ("_x.", InvalidCollectionName(text: "_x.", reason: .emptyPart)),
            (
                "s." + String(repeating: "x", count: 252),
                InvalidCollectionName(text: "s." + String(repeating: "x", count: 252), reason: .tooLong)
            ),
            ("_x", InvalidCollectionName(text: "_default._x", reason: .reservedFirstCharacter)),
            ("_system._mobile", InvalidCollectionName(text: "_system._mobile", reason: .reservedFirstCharacter)),
            ("s._x", InvalidCollectionName(text: "s._x", reason: .reservedFirstCharacter)),
            ("s.%x", InvalidCollectionName(text: "s.%x", reason: .reservedFirstCharacter)),
            ("s._default", InvalidCollectionName(text: "s._default", reason: .defaultCollectionOutsideDefaultScope)),
            ("s.spaced name", InvalidCollectionName(text: "s.spaced name", reason: .disallowedCharacter)),
            ("s.café", InvalidCollectionName(text: "s.café", reason: .disallowedCharacter)),
        ])
    func rejections(text: String, expected: InvalidCollectionName) {
        #expect(throws: expected) { try CollectionName(parsing: text) }
    }

    @Test("A part given on its own may not contain the separator")
    func separatorInAPart() {
        #expect(throws: InvalidCollectionName(text: "s.a.b", reason: .disallowedCharacter)) {
            try CollectionName(scope: "s", name: "a.b")
        }
    }

    @Test("The error names the text and the rule")
    func errorDescription() {
        #expect(
            InvalidCollectionName(text: "a.b.c", reason: .tooManyParts).description
                == "invalid collection name 'a.b.c': expected 'scope.collection' or 'collection'")
        #expect(
            InvalidCollectionName(text: "_default._x", reason: .reservedFirstCharacter).description
                == "invalid collection name '_default._x': names must not start with '_' or '%' (except '_default')")
    }
}
