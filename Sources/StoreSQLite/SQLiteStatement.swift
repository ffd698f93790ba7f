import CSQLite
import Store

/// A prepared statement. Owned by the connection that made it, on one thread.
public final class SQLiteStatement {
    let handle: OpaquePointer
    private unowned let connection: SQLiteConnection

    /// `SQLITE_TRANSIENT` rebuilt by hand: the C macro does not import into Swift.
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    init(handle: OpaquePointer, connection: SQLiteConnection) {
        self.handle = handle
        self.connection = connection
    }

    deinit { sqlite3_finalize(handle) }

    /// Resets the statement and binds `values` to parameters 1...n.
    public func bind(_ values: [SQLValue]) throws {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
        // A statement may use fewer parameters than a plan bound for all of
        // its statements; the ones past its highest are not its own.
        let count = Int(sqlite3_bind_parameter_count(handle))
        for (i, value) in values.prefix(count).enumerated() {
            let index = Int32(i + 1)
            let rc: Int32
            switch value {
            case .null: rc = sqlite3_bind_null(handle, index)
            case .int(let v): rc = sqlite3_bind_int64(handle, index, v)
            case .double(let v): rc = sqlite3_bind_double(handle, index, v)
            case .text(let v): rc = Self.bindText(handle, index, v)
            }
            guard rc == SQLITE_OK else { throw connection.lastError(rc) }
        }
    }

    /// Binds `text` with its byte length: a NUL inside it is data, so SQL
    /// sees exactly the string Swift checked (`-1` would stop at the NUL).
    private static func bindText(_ handle: OpaquePointer, _ index: Int32, _ text: String) -> Int32 {
        var text = text
        return text.withUTF8 { bytes in
            bytes.withMemoryRebound(to: CChar.self) { chars in
                // An empty buffer may have no address, and NULL would bind SQL NULL.
                sqlite3_bind_text(handle, index, chars.baseAddress ?? Self.emptyText, Int32(chars.count), Self.transient)
            }
        }
    }

    nonisolated(unsafe) private static let emptyText: UnsafePointer<CChar> = {
        let p = UnsafeMutablePointer<CChar>.allocate(capacity: 1)
        p.initialize(to: 0)
        return UnsafePointer(p)
    }()

    /// Steps once. Returns true while a row is available.
    public func step() throws -> Bool {
        let rc = sqlite3_step(handle)
        switch rc {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default:
            let error = connection.lastError(rc)
            sqlite3_reset(handle)
            throw error
        }
    }

    /// Runs a statement that returns no rows.
    public func run(_ values: [SQLValue] = []) throws {
        try bind(values)
        while try step() {}
        sqlite3_reset(handle)
    }

    /// Runs a query and maps every row.
    public func rows<T>(_ values: [SQLValue] = [], _ map: (SQLiteStatement) throws -> T) throws -> [T] {
        try bind(values)
        defer { sqlite3_reset(handle) }
        var out: [T] = []
        while try step() { out.append(try map(self)) }
        return out
    }

    /// Runs a query and maps its first row, if any.
    public func firstRow<T>(_ values: [SQLValue] = [], _ map: (SQLiteStatement) throws -> T) throws -> T? {
        try bind(values)
        defer { sqlite3_reset(handle) }
        return try step() ? map(self) : nil
    }

    public func int(_ column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }
    public func double(_ column: Int32) -> Double { sqlite3_column_double(handle, column) }
    public func isNull(_ column: Int32) -> Bool { sqlite3_column_type(handle, column) == SQLITE_NULL }

    /// The column as a `SQLValue`, keeping its storage class.
    public func value(_ column: Int32) -> SQLValue {
        switch sqlite3_column_type(handle, column) {
        case SQLITE_NULL: return .null
        case SQLITE_INTEGER: return .int(int(column))
        case SQLITE_FLOAT: return .double(double(column))
        default: return .text(text(column))
        }
    }

    public func text(_ column: Int32) -> String {
        guard let p = sqlite3_column_text(handle, column) else { return "" }
        let n = Int(sqlite3_column_bytes(handle, column))
        return String(decoding: UnsafeBufferPointer(start: p, count: n), as: UTF8.self)
    }

    /// The column's bytes, without a String round trip.
    public func bytes(_ column: Int32) -> [UInt8] {
        guard let p = sqlite3_column_text(handle, column) else { return [] }
        let n = Int(sqlite3_column_bytes(handle, column))
        return Array(UnsafeBufferPointer(start: p, count: n))
    }
}
