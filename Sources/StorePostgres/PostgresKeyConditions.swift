import JSON
import Store

/// Conditions on a declared index's own columns, so a list's equality or
/// range is an index condition and its page an index walk (issue #42).
///
/// A declared value index on a top-level field stores its sort key:
/// (bracket, number, text, rid), the very expressions of
/// `PostgresDocumentReader.orderColumns`, where number and text are never
/// NULL (0 and '' outside their bracket). On a row whose field is not an
/// array, the filter's generic condition and the key condition hold
/// alike:
///
/// | condition | on the key |
/// |---|---|
/// | `= null` | bracket 1 (null or missing), number 0, text '' |
/// | `= n` (a number) | bracket 2, number = n, text '' |
/// | `> n`, … (a number) | bracket 2 and number op n |
/// | `= s`, `> s`, … (a string) | bracket 3, number 0 and text op s (byte order) |
/// | `= true` / `= false` | bracket 6, number 0 and text 'true' / 'false' |
///
/// A field that holds an array somewhere matches through the array's
/// elements too, which no key condition covers. So a statement that uses a
/// key condition carries a gate, `NOT EXISTS (a row whose field is an
/// array)`, one descent of the same index (bracket 5), evaluated once per
/// statement: a statement whose gate fails returns no rows, and the reader
/// then asks (same snapshot) whether arrays were the reason, remembers the
/// field as holding arrays and compiles the list again generically. Any
/// row returned proves the gate held, so no answer depends on the reader's
/// memory being current.
enum PostgresKeyConditions {
    /// The key condition for `field op value`, or nil when none is exact.
    static func condition(_ field: String, _ op: String, _ value: JSONValue, bind: (SQLValue) -> String) -> String? {
        guard let sqlOp = ["$eq": "=", "$gt": ">", "$gte": ">=", "$lt": "<", "$lte": "<="][op] else { return nil }
        let key = PostgresDocumentReader.orderColumns(field, ascending: true, bind).map(\.sql)
        // Built-in columns (_id, _createdAt, _updatedAt) have one column, no key condition.
        guard key.count == 3 else { return nil }
        let (bracket, number, text) = (key[0], key[1], key[2])
        // An equality fixes every column before rid (text is '' for numbers and null),
        // so its entries come in row order: an unsorted page stops at its limit.
        let textEmpty = sqlOp == "=" ? " AND \(text) = ''" : ""
        switch value {
        case .null where sqlOp == "=": return "(\(bracket) = 1 AND \(number) = 0\(textEmpty))"
        case .int(let i): return "(\(bracket) = 2 AND \(number) \(sqlOp) (\(bind(.int(i))))::numeric\(textEmpty))"
        case .double(let d) where d.isFinite: return "(\(bracket) = 2 AND \(number) \(sqlOp) \(bind(.double(d)))\(textEmpty))"
        case .string(let s): return "(\(bracket) = 3 AND \(number) = 0 AND \(text) \(sqlOp) \(bind(.text(s))))"
        case .bool(let b) where sqlOp == "=": return "(\(bracket) = 6 AND \(number) = 0 AND \(text) = '\(b ? "true" : "false")')"
        default: return nil
        }
    }

    /// True (for the statement, once) when no row of `table` holds an array at `field`.
    static func gate(table: String, field: String) -> String {
        "NOT EXISTS (SELECT 1 FROM \(table) AS k WHERE \(bracket(field, row: "k")) = 5)"
    }

    /// Whether some row of `table` holds an array at one of `fields` (in the caller's snapshot).
    static func arrayProbe(table: String, fields: [String]) -> String {
        "SELECT " + fields.map { "EXISTS (SELECT 1 FROM \(table) AS k WHERE \(bracket($0, row: "k")) = 5)" }.joined(separator: ", ")
    }

    /// The bracket expression of `field` over row `row` (its `body` and `doc`).
    static func bracket(_ field: String, row: String) -> String {
        PostgresDocumentReader.orderColumns(field, ascending: true, document: "\(row).doc", PostgresDocumentWriter.literal)[0].sql
    }

    /// The top-level range an unsorted list may walk in its field's order, as
    /// SQLite does: `filter`'s only indexed member, a range of one bracket
    /// (`$gt`/`$gte`/`$lt`/`$lte` on numbers, or on strings).
    static func rangeField(_ filter: JSONValue, indexed: Set<String>) -> String? {
        let members = filter.objectValue?.members.map(\.key) ?? []
        let keyed = members.filter { $0 == "_id" || indexed.contains($0) }
        guard keyed.count == 1, keyed[0] != "_id", case .object(let ops)? = filter.objectValue?[keyed[0]], !ops.isEmpty else { return nil }
        var numbers = 0, strings = 0
        for (op, arg) in ops {
            guard ["$gt", "$gte", "$lt", "$lte"].contains(op) else { return nil }
            switch arg {
            case .int: numbers += 1
            case .double(let d) where d.isFinite: numbers += 1
            case .string: strings += 1
            default: return nil
            }
        }
        return numbers == 0 || strings == 0 ? keyed[0] : nil
    }
}
