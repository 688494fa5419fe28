import ArgumentParser
import EdgeConfig
import EdgeGatewayApp
import EdgeStore
import Foundation
import SyncIdentifiers

/// Moves a database's documents in and out as JSON Lines, for seeding a site, backups an operator can read, and
/// moving data between gateways that do not replicate with each other.
struct DatabaseCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "db",
        abstract: "Export and import a database's documents as JSON Lines.",
        discussion: """
            Works on the data directory of the configuration, also while a gateway runs on it: the gateway \
            notices imported documents within a second and replicates them like its own changes.
            """,
        subcommands: [Export.self, Import.self]
    )

    struct Target: ParsableArguments {
        @OptionGroup var options: ConfigurationOptions

        @Argument(help: "The database.") var database: String

        @Option(
            help: "The collection, as scope.collection or DB.scope.collection; the default collection if omitted.")
        var keyspace: String?

        func open() async throws -> (DocumentDatabase, CollectionName) {
            let configuration = try options.load()
            do {
                let settings = try configuration.databaseSettings(named: database)
                let collection = try collectionName()
                let store = try DocumentStore.forConfiguration(configuration)
                return (try await store.openConfigured(settings), collection)
            } catch {
                printError("\(error)")
                throw ExitCode(2)
            }
        }

        private func collectionName() throws -> CollectionName {
            guard let keyspace else { return .default }
            let parts = keyspace.split(separator: ".", omittingEmptySubsequences: false)
            if parts.count == 3 {
                guard parts[0] == database else {
                    throw ValidationError("keyspace \"\(keyspace)\" names another database than \"\(database)\"")
                }
                return try CollectionName(parsing: parts.dropFirst().joined(separator: "."))
            }
            return try CollectionName(parsing: keyspace)
        }
    }

    struct Export: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write every document's current revision to standard output, one JSON object a line.",
            discussion: """
                Each line is the document's body with "_id", "_rev", its history as "_revisions" ({"start": \
                generation, "ids": [digests, newest first]}) and, for a deletion, "_deleted": true: what an \
                import needs to store the same revision IDs. Conflicting branches are not exported, only the \
                current revision. Progress goes to standard error: a bar with rate and ETA on a terminal, plain \
                lines otherwise.
                """
        )

        @OptionGroup var target: Target
        @Option(help: "Documents read per snapshot.") var batchSize = 500

        func run() async throws {
            let (database, collection) = try await target.open()
            let progress = TransferProgress(
                verb: "exported", total: try await storeCall { try await database.documentCount(in: collection) },
                isTerminal: isatty(STDERR_FILENO) == 1)
            var sequence: Int64 = 0
            var exported = 0
            let output = FileHandle.standardOutput
            while true {
                let (documents, last) = try await storeCall {
                    try await database.currentDocuments(in: collection, after: sequence, limit: batchSize)
                }
                if documents.isEmpty && last == sequence { break }
                sequence = last
                var chunk = Data()
                for exported in documents {
                    chunk.append(try Self.line(for: exported))
                }
                output.write(chunk)
                exported += documents.count
                progress.show(completed: exported)
            }
            progress.finish(completed: exported)
            try database.close()
        }

        /// The stored body with the metadata spliced in front, byte for byte otherwise: numbers keep their exact
        /// spelling. JSON allows raw line breaks only between tokens, so dropping them keeps one object a line.
        static func line(for exported: ExportedDocument) throws -> Data {
            let document = exported.document
            var metadata: [String: Any] = [
                "_id": document.docID, "_rev": document.revID.description,
                "_revisions": [
                    "start": Int(document.revID.generation),
                    "ids": ([document.revID] + exported.ancestors).map(\.digest),
                ],
            ]
            if document.deleted { metadata["_deleted"] = true }
            var line = try JSONSerialization.data(withJSONObject: metadata, options: [.sortedKeys])
            let body = document.body.filter { $0 != 0x0A && $0 != 0x0D }
            guard let open = body.firstIndex(of: UInt8(ascii: "{")) else {
                throw ValidationError("document \"\(document.docID)\" has a body that is not a JSON object")
            }
            let rest = body[body.index(after: open)...]
            if rest.contains(where: { !Self.isWhitespace($0) && $0 != UInt8(ascii: "}") }) {
                line.removeLast()  // the metadata's closing brace
                line.append(UInt8(ascii: ","))
                line.append(contentsOf: rest)
            }
            line.append(0x0A)
            return line
        }

        private static func isWhitespace(_ byte: UInt8) -> Bool {
            byte == 0x20 || byte == 0x09
        }
    }

    struct Import: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Store the documents of a JSON Lines file, each as its document's new current revision.",
            discussion: """
                Each non-empty line is a JSON object with a string "_id"; "_deleted": true deletes the document. \
                A line with "_rev" (and "_revisions", as export writes them) is stored under that revision ID \
                with that history, so an export imported elsewhere keeps its revision IDs; it becomes the \
                document's current revision, replacing a diverging local one, and a revision the document \
                already has is left as it is. A line without "_rev" becomes a new revision on top of whatever \
                is there. Lines are stored \
                in transactions of --batch-size: a bad line stops the import with its line number, and nothing of \
                its batch is stored; the batches before it are. Progress goes to standard error.
                """
        )

        @OptionGroup var target: Target
        @Argument(help: "The JSON Lines file.") var file: String
        @Option(help: "Lines stored per transaction.") var batchSize = 500

        func validate() throws {
            guard batchSize > 0 else { throw ValidationError("--batch-size must be at least 1") }
        }

        func run() async throws {
            // Mapped, not read: an import file can be larger than the memory of the device it runs on.
            guard let input = try? Data(contentsOf: URL(fileURLWithPath: file), options: .alwaysMapped) else {
                printError("cannot read \(file)")
                throw ExitCode(2)
            }
            let (database, collection) = try await target.open()
            let size = input.count
            let progress = TransferProgress(verb: "imported", total: nil, isTerminal: isatty(STDERR_FILENO) == 1)
            var outcome = ImportOutcome()
            var batch: [ImportedDocument] = []
            var batchFirstLine = 1
            var lineNumber = 0
            var bytesRead = 0

            func store() async throws {
                guard !batch.isEmpty else { return }
                let stored: ImportOutcome
                do {
                    stored = try await database.importDocuments(batch, in: collection)
                } catch {
                    try? database.close()
                    Self.refuse(
                        "lines \(batchFirstLine)-\(lineNumber) could not be stored: \(error)", outcome: outcome)
                }
                outcome.written += stored.written
                outcome.alreadyPresent += stored.alreadyPresent
                outcome.skippedDeletions += stored.skippedDeletions
                batch.removeAll(keepingCapacity: true)
                progress.show(completed: outcome.documents, fraction: Self.fraction(bytesRead, size))
            }

            var lineStart = input.startIndex
            while lineStart < input.endIndex {
                let lineEnd = input[lineStart...].firstIndex(of: 0x0A) ?? input.endIndex
                let line = input[lineStart..<lineEnd]
                lineStart = lineEnd < input.endIndex ? input.index(after: lineEnd) : lineEnd
                lineNumber += 1
                bytesRead = lineStart - input.startIndex
                if batch.isEmpty { batchFirstLine = lineNumber }
                if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { continue }
                do {
                    batch.append(try Self.document(from: Data(line)))
                } catch {
                    try? database.close()
                    Self.refuse("line \(lineNumber): \(error)", outcome: outcome)
                }
                if batch.count >= batchSize { try await store() }
            }
            try await store()
            progress.finish(completed: outcome.documents)
            try database.close()
            print(Self.summary(outcome))
        }

        static func document(from line: Data) throws -> ImportedDocument {
            guard let object = try? JSONSerialization.jsonObject(with: line) else {
                throw ImportLineError("not valid JSON")
            }
            guard var fields = object as? [String: Any] else { throw ImportLineError("not a JSON object") }
            guard let docID = fields.removeValue(forKey: "_id") as? String else {
                throw ImportLineError("no string \"_id\"")
            }
            do {
                try DocumentID.validate(docID)
            } catch {
                throw ImportLineError("\(error)")
            }
            let revisions = try Self.revisions(
                rev: fields.removeValue(forKey: "_rev"), history: fields.removeValue(forKey: "_revisions"))
            let deleted: Bool
            switch fields.removeValue(forKey: "_deleted") {
            case nil: deleted = false
            case let flag as Bool: deleted = flag
            default: throw ImportLineError("\"_deleted\" must be true or false")
            }
            if let reserved = fields.keys.sorted().first(where: { $0.hasPrefix("_") && $0 != "_attachments" }) {
                throw ImportLineError("\"\(reserved)\" is reserved: top-level properties may not start with \"_\"")
            }
            let body = try JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys])
            return ImportedDocument(docID: docID, body: body, deleted: deleted, revisions: revisions)
        }

        /// `_rev` and `_revisions` of a line: the revision and its ancestors, newest first; empty without `_rev`.
        private static func revisions(rev: Any?, history: Any?) throws -> [RevisionID] {
            guard let rev else {
                if history != nil { throw ImportLineError("\"_revisions\" without \"_rev\"") }
                return []
            }
            guard let text = rev as? String, let revID = try? RevisionID(text) else {
                throw ImportLineError("\"_rev\" must be a revision ID such as \"1-abc1\"")
            }
            guard let history else { return [revID] }
            guard let fields = history as? [String: Any], let start = (fields["start"] as? NSNumber)?.intValue,
                let digests = fields["ids"] as? [String], !digests.isEmpty
            else {
                throw ImportLineError("\"_revisions\" must be {\"start\": generation, \"ids\": [digests]}")
            }
            let chain: [RevisionID]
            do {
                chain = try RevisionID.chain(start: start, digests: digests)
            } catch {
                throw ImportLineError("\"_revisions\": \(error)")
            }
            guard chain[0] == revID else {
                throw ImportLineError("\"_rev\" \(revID) is not the newest revision of \"_revisions\", \(chain[0])")
            }
            return chain
        }

        static func summary(_ outcome: ImportOutcome) -> String {
            "\(outcome.written) documents stored, \(outcome.alreadyPresent) already present, "
                + "\(outcome.skippedDeletions) deletions of absent documents skipped"
        }

        private static func fraction(_ done: Int, _ total: Int) -> Double? {
            total > 0 ? min(1, Double(done) / Double(total)) : nil
        }

        private static func refuse(_ message: String, outcome: ImportOutcome) -> Never {
            printError("import stopped: \(message); nothing of its batch was stored")
            printError("before it: \(summary(outcome))")
            Foundation.exit(1)
        }
    }
}

struct ImportLineError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Runs a store call, ending the command with the store's own message on failure.
private func storeCall<Result>(_ body: () async throws -> Result) async throws -> Result {
    do {
        return try await body()
    } catch let error as StoreError {
        printError("\(error)")
        throw ExitCode(1)
    }
}
