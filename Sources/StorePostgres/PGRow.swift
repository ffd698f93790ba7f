import CPostgres

/// One row of a result, read by column number. Values come as text (the
/// statements ask for text results); a NULL reads as nil.
public struct PGRow {
    let result: OpaquePointer
    let row: Int32

    public var columnCount: Int { Int(PQnfields(result)) }

    public func isNull(_ column: Int) -> Bool { PQgetisnull(result, row, Int32(column)) == 1 }

    /// The column as text, or nil for NULL.
    public func text(_ column: Int) -> String? {
        guard !isNull(column), let value = PQgetvalue(result, row, Int32(column)) else { return nil }
        return String(cString: value)
    }

    /// The column as an integer, or nil for NULL or a non-integer.
    public func int(_ column: Int) -> Int64? { text(column).flatMap { Int64($0) } }

    /// The column as a boolean (`t`/`f`), or nil for NULL.
    public func bool(_ column: Int) -> Bool? { text(column).map { $0 == "t" } }
}
