import Foundation
import GRDB
import GRDBSQLite

/// One value bound to a `?` of a statement run with `directRows` or `directExecute`.
enum DirectArgument {
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob(Data)
    case null

    static func bool(_ value: Bool) -> DirectArgument { .integer(value ? 1 : 0) }
    static func text(_ value: String?) -> DirectArgument { value.map { .text($0) } ?? .null }
    static func blob(_ value: Data?) -> DirectArgument { value.map { .blob($0) } ?? .null }
}

/// The current result row of a statement stepped by `directRows`, read column by column from SQLite.
struct DirectRow {
    fileprivate let handle: SQLiteStatement

    func isNull(_ column: Int32) -> Bool {
        sqlite3_column_type(handle, column) == SQLITE_NULL
    }

    func int64(_ column: Int32) -> Int64 {
        sqlite3_column_int64(handle, column)
    }

    func bool(_ column: Int32) -> Bool {
        sqlite3_column_int64(handle, column) != 0
    }

    func double(_ column: Int32) -> Double {
        sqlite3_column_double(handle, column)
    }

    /// The column as text; `nil` when it is NULL.
    func string(_ column: Int32) -> String? {
        guard let text = sqlite3_column_text(handle, column) else { return nil }
        let count = Int(sqlite3_column_bytes(handle, column))
        return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
    }

    /// The column as bytes; `nil` when it is NULL (an empty blob reads as empty data).
    func data(_ column: Int32) -> Data? {
        guard !isNull(column) else { return nil }
        let count = Int(sqlite3_column_bytes(handle, column))
        guard count > 0, let bytes = sqlite3_column_blob(handle, column) else { return Data() }
        return Data(bytes: bytes, count: count)
    }
}

// SQLITE_TRANSIENT is a C macro (a cast of -1) that Swift does not import: SQLite copies the text.
private let transientDestructor = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

extension Statement {
    /// Steps this (cached, read-only) statement with `arguments` and hands each result row to `body`.
    ///
    /// Reading through GRDB's `Row` builds a column-name index on every execution; on the replication hot
    /// paths (one document lookup per revision) that cost more than SQLite's own lookup. This reads the
    /// columns straight from SQLite instead. Only for SELECTs: writes go through GRDB, which tracks
    /// transactions and observers around each statement it executes.
    func directRows(_ arguments: [DirectArgument], _ body: (DirectRow) throws -> Void) throws {
        try withDirectExecution(arguments) { step in
            while try step() {
                try body(DirectRow(handle: sqliteStatement))
            }
        }
    }

    /// Runs this (cached) INSERT, UPDATE or DELETE with `arguments`, without GRDB's argument boxing.
    ///
    /// GRDB's own execution also informs its transaction observers; the store registers none (commits are
    /// announced by `DocumentDatabase.write`), so stepping the statement directly changes nothing else.
    func directExecute(_ arguments: [DirectArgument]) throws {
        try withDirectExecution(arguments) { step in
            while try step() {}
        }
    }

    /// The first result row read by `read`, or `nil` when there is none.
    func directFirstRow<Value>(_ arguments: [DirectArgument], _ read: (DirectRow) throws -> Value) throws -> Value? {
        try withDirectExecution(arguments) { step in
            try step() ? try read(DirectRow(handle: sqliteStatement)) : nil
        }
    }

    /// Binds `arguments`, then lets `body` step (true while there is a row); resets the statement after.
    private func withDirectExecution<Value>(
        _ arguments: [DirectArgument], _ body: (_ step: () throws -> Bool) throws -> Value
    ) throws -> Value {
        let handle = sqliteStatement
        let connection = sqlite3_db_handle(handle)
        sqlite3_reset(handle)
        defer { sqlite3_reset(handle) }
        for (offset, argument) in arguments.enumerated() {
            let index = Int32(offset + 1)
            let code: Int32
            switch argument {
            case .integer(let value):
                code = sqlite3_bind_int64(handle, index, value)
            case .real(let value):
                code = sqlite3_bind_double(handle, index, value)
            case .text(let value):
                code = sqlite3_bind_text(handle, index, value, -1, transientDestructor)
            case .blob(let value) where value.isEmpty:
                // A NULL pointer would bind NULL, not an empty blob.
                code = sqlite3_bind_zeroblob(handle, index, 0)
            case .blob(let value):
                code = value.withUnsafeBytes { bytes in
                    sqlite3_bind_blob(handle, index, bytes.baseAddress, Int32(bytes.count), transientDestructor)
                }
            case .null:
                code = sqlite3_bind_null(handle, index)
            }
            guard code == SQLITE_OK else { throw directError(code, connection) }
        }
        return try body {
            let code = sqlite3_step(handle)
            switch code {
            case SQLITE_ROW: return true
            case SQLITE_DONE: return false
            default: throw self.directError(code, connection)
            }
        }
    }

    private func directError(_ code: Int32, _ connection: OpaquePointer?) -> DatabaseError {
        DatabaseError(
            resultCode: ResultCode(rawValue: code),
            message: connection.map { String(cString: sqlite3_errmsg($0)) }, sql: sql)
    }
}
