import JSON
import Store

/// The fields whose key conditions (`PostgresKeyConditions`) one compiled filter used.
final class KeyedFields {
    var fields: Set<String> = []
}

/// Which conditions of a list are written on a declared index's key, and
/// what the reader remembers to decide it: the collection's value indexes
/// and the fields seen holding arrays.
extension PostgresDocumentReader {
    /// Lists and counts run on the generic plan of their prepared statement
    /// (for this transaction only; sent with the next statement). A list's
    /// text names its paths and index expressions, its values are
    /// parameters: the generic plan walks the same index for every value,
    /// and PostgreSQL's default would plan each execution again while it
    /// judges the generic plan dearer (0.5-1 ms of planning against 0.1-0.2
    /// ms of execution for a 20-row page, measured at 10,000 rows).
    ///
    /// JIT compilation is off for them too: a generic plan knows no LIMIT
    /// (it assumes a tenth of the table), so its estimate passes
    /// `jit_above_cost` on large tables and a 20-row page spent 40 ms
    /// compiling (a skip page's deferred join at 200,000 rows).
    ///
    /// Nor parallel workers: for the same tenth of a small table a generic
    /// plan chose two workers scanning and sorting a value index under a
    /// Gather Merge over the walk of the primary key, and starting them
    /// cost more than any page (a `skip=9000` page at 10,000 rows: 42 ms
    /// against 1.4 ms for the walk, which it picks without them).
    func useGenericPlans() {
        db.runDeferred("SELECT set_config('plan_cache_mode', 'force_generic_plan', true), set_config('jit', 'off', true),"
            + " set_config('max_parallel_workers_per_gather', '0', true)")
    }

    /// The paths of `layout`'s declared value indexes, read once per
    /// connection (they change at start-up only; a stale answer costs
    /// speed, never an answer: key conditions are exact either way).
    func valueIndexFields(_ layout: CollectionLayout) throws -> Set<String> {
        if let known = valueIndexes[layout.tableID] { return known }
        let fields = Set(try db.query("SELECT path FROM _indexes WHERE collection_id = $1::bigint AND kind = 'value'",
                                      [.int(layout.tableID)]) { $0.text(0) ?? "" })
        valueIndexes[layout.tableID] = fields
        return fields
    }

    /// The fields a list of `filter` may write key conditions for: top-level,
    /// indexed, holding no array in this snapshot. None for a read with a row
    /// rule: its filter runs only on visible rows and never walks a value
    /// index (a walk's timing would follow rows the caller cannot read), as
    /// on SQLite. A field this connection saw holding an array is probed
    /// again (one descent of its index) when `filter` names it, so the choice,
    /// and an unsorted range's order with it, follows the snapshot, never
    /// which connection serves the list.
    func keyFields(_ layout: CollectionLayout, scope: AccessScope, filter: JSONValue) throws -> Set<String> {
        guard case .all = scope.readRule else { return [] }
        let indexed = try valueIndexFields(layout).filter { !$0.contains(".") }
        let named = Self.memberNames(filter)
        let remembered = indexed.filter { named.contains($0) && arrayFields.contains("\(layout.table).\($0)") }
        if !remembered.isEmpty {
            let holding = try arrays(layout, remembered)
            for field in remembered.subtracting(holding) { arrayFields.remove("\(layout.table).\(field)") }
        }
        return indexed.filter { !arrayFields.contains("\(layout.table).\($0)") }
    }

    /// Every member name anywhere in `value` (a filter's fields and operators).
    static func memberNames(_ value: JSONValue) -> Set<String> {
        switch value {
        case .object(let object): return object.members.reduce(into: Set<String>()) { $0.insert($1.key); $0.formUnion(memberNames($1.value)) }
        case .array(let items): return items.reduce(into: Set<String>()) { $0.formUnion(memberNames($1)) }
        default: return []
        }
    }

    /// A compiler that writes key conditions for `fields`, noting each one it writes in `used`.
    func makeListCompiler(_ layout: CollectionLayout, keyFields fields: Set<String>, used: KeyedFields) -> FilterCompiler {
        let compiler = makeCompiler(layout)
        guard !fields.isEmpty else { return compiler }
        compiler.keyCondition = { field, op, value, bind in
            guard fields.contains(field), let sql = PostgresKeyConditions.condition(field, op, value, bind: bind) else { return nil }
            used.fields.insert(field)
            return sql
        }
        return compiler
    }

    /// After a gated statement returned no row: whether a row of `layout`
    /// holds an array at one of `fields` (in the same snapshot). Such fields
    /// are remembered, so this connection's next lists on them probe first.
    func foundArrays(_ layout: CollectionLayout, _ fields: Set<String>) throws -> Bool {
        let found = try arrays(layout, fields)
        for field in found { arrayFields.insert("\(layout.table).\(field)") }
        return !found.isEmpty
    }

    /// Those of `fields` some row of `layout` holds an array at (in the caller's snapshot).
    func arrays(_ layout: CollectionLayout, _ fields: Set<String>) throws -> Set<String> {
        let list = fields.sorted()
        return Set(try db.first(PostgresKeyConditions.arrayProbe(table: layout.table, fields: list)) { row in
            list.indices.filter { row.bool($0) == true }.map { list[$0] }
        } ?? [])
    }
}
