import ArgumentParser
import EdgeConfig
import EdgeGatewayApp
import EdgeStore
import Foundation
import SyncIdentifiers

/// Reads and writes documents of a configured database directly in the data directory: for operators
/// checking what arrived, seeding a database, and scripted tests. It is not an API for apps, which sync.
struct DocsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "docs",
        abstract: "Read and write documents of a local database.",
        discussion: """
            Works on the data directory of the configuration, with or without a gateway running on it. \
            Writes made here while a gateway runs are stored at once; the gateway notices them within a second \
            and sends them to its continuous clients and upstreams.
            """,
        subcommands: [Put.self, Get.self, Delete.self, List.self]
    )

    struct Target: ParsableArguments {
        @OptionGroup var options: ConfigurationOptions

        @Option(name: .customLong("db"), help: "The database; may be omitted when only one is configured.")
        var database: String?

        @Option(help: "The collection, as scope.collection.")
        var collection: String = "_default._default"

        func open() async throws -> (DocumentDatabase, CollectionName) {
            let configuration = try options.load()
            do {
                let settings = try configuration.databaseSettings(named: database)
                let collectionName = try CollectionName(parsing: collection)
                let store = try DocumentStore.forConfiguration(configuration)
                return (try await store.openConfigured(settings), collectionName)
            } catch {
                printError("\(error)")
                throw ExitCode(2)
            }
        }
    }

    struct Put: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create a document, or replace the current revision of an existing one.",
            discussion: "Prints the document ID and its new revision ID."
        )

        @OptionGroup var target: Target
        @Argument(help: "The document ID.") var docID: String
        @Argument(help: "The JSON object; read from standard input when omitted.") var json: String?

        func run() async throws {
            let body = try readBody()
            let (database, collection) = try await target.open()
            try await reportingStoreErrors {
                let current = try await database.document(docID, in: collection)
                let parent = current.flatMap { $0.deleted ? nil : $0.revID }
                let saved = try await database.save(docID, body: body, parentRevID: parent, in: collection)
                print("\(docID) \(saved.revID)")
            }
            try database.close()
        }

        private func readBody() throws -> Data {
            let text = json ?? String(decoding: FileHandle.standardInput.readDataToEndOfFile(), as: UTF8.self)
            let data = Data(text.utf8)
            guard (try? JSONSerialization.jsonObject(with: data)) is [String: Any] else {
                throw ValidationError("the document body must be a JSON object, e.g. '{\"name\": \"value\"}'")
            }
            return data
        }
    }

    struct Get: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print a document's current revision as JSON, with _id, _rev and, if deleted, _deleted.",
            discussion: "Exits 1 when the document does not exist."
        )

        @OptionGroup var target: Target
        @Argument(help: "The document ID.") var docID: String

        func run() async throws {
            let (database, collection) = try await target.open()
            let document = try await reportingStoreErrors { try await database.document(docID, in: collection) }
            try database.close()
            guard let document else {
                printError("no document \"\(docID)\" in \(collection)")
                throw ExitCode(1)
            }
            var object = (try JSONSerialization.jsonObject(with: document.body) as? [String: Any]) ?? [:]
            object["_id"] = document.docID
            object["_rev"] = document.revID.description
            if document.deleted { object["_deleted"] = true }
            let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
            print(String(decoding: data, as: UTF8.self))
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Delete a document, leaving a tombstone that replicates.")

        @OptionGroup var target: Target
        @Argument(help: "The document ID.") var docID: String

        func run() async throws {
            let (database, collection) = try await target.open()
            let deleted: Bool = try await reportingStoreErrors {
                guard let current = try await database.document(docID, in: collection), !current.deleted else {
                    return false
                }
                let saved = try await database.delete(docID, parentRevID: current.revID, in: collection)
                print("\(docID) \(saved.revID)")
                return true
            }
            try database.close()
            guard deleted else {
                printError("no live document \"\(docID)\" in \(collection)")
                throw ExitCode(1)
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List the documents changed after a sequence, oldest first: sequence, ID, revision.",
            discussion: "Deleted documents are marked \"deleted\"."
        )

        @OptionGroup var target: Target
        @Option(help: "Only changes after this sequence.") var since: Int64 = 0
        @Option(help: "At most this many rows.") var limit: Int = .max

        func run() async throws {
            let (database, collection) = try await target.open()
            let changes = try await reportingStoreErrors {
                try await database.changes(in: collection, since: since, limit: limit)
            }
            try database.close()
            for change in changes {
                print("\(change.sequence) \(change.docID) \(change.revID)\(change.deleted ? " deleted" : "")")
            }
        }
    }
}

/// Store errors (an invalid document ID, an unknown collection, a full disk) end the command with their own
/// message and exit status 1 rather than a stack of Swift error descriptions.
private func reportingStoreErrors<Result>(_ body: () async throws -> Result) async throws -> Result {
    do {
        return try await body()
    } catch let error as StoreError {
        printError("\(error)")
        throw ExitCode(1)
    }
}
