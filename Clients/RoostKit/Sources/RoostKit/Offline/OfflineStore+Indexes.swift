import Foundation

/// Local indexes: for each path a ``Mirror`` declares in `indexes`, the
/// scalar values each local copy holds there (array elements fanned out, as
/// the matcher sees them), so a local query can read only the candidates.
/// The index only narrows: every candidate still goes through the full
/// matcher, so results are the same with or without it.
extension OfflineStore {
    /// Makes the stored index declarations match `mirrors`: drops removed
    /// paths, fills new ones from the local copies.
    static func prepareIndexes(_ db: SQLiteDatabase, _ mirrors: [String: Mirror]) throws {
        let declared = Set(mirrors.values.flatMap { m in m.indexes.map { IndexKey(collection: m.name, path: $0) } })
        let existing = Set(try db.query("SELECT collection, path FROM local_indexes").map { IndexKey(collection: $0[0].text ?? "", path: $0[1].text ?? "") })
        try db.transaction {
            for gone in existing.subtracting(declared) {
                try db.execute("DELETE FROM local_indexes WHERE collection = ? AND path = ?", [.text(gone.collection), .text(gone.path)])
                try db.execute("DELETE FROM entity_values WHERE collection = ? AND path = ?", [.text(gone.collection), .text(gone.path)])
            }
            for new in declared.subtracting(existing) {
                try db.execute("INSERT INTO local_indexes (collection, path) VALUES (?, ?)", [.text(new.collection), .text(new.path)])
                for row in try db.query("SELECT id, body FROM entities WHERE collection = ?", [.text(new.collection)]) {
                    guard let id = row[0].text, let body = row[1].data.flatMap({ try? JSONValue.parse($0) }) else { continue }
                    try insertValues(db, new.collection, id, new.path, body)
                }
            }
        }
    }

    /// Re-indexes one local copy (nil: it is gone).
    func index(_ collection: String, _ id: String, _ body: JSONValue?) throws {
        guard let paths = mirrors[collection]?.indexes, !paths.isEmpty else { return }
        try db.execute("DELETE FROM entity_values WHERE collection = ? AND id = ?", [.text(collection), .text(id)])
        guard let body else { return }
        for path in paths { try Self.insertValues(db, collection, id, path, body) }
    }

    private static func insertValues(_ db: SQLiteDatabase, _ collection: String, _ id: String, _ path: String, _ body: JSONValue) throws {
        let values = Set(LocalMatcher.resolve(body, path.split(separator: ".").map(String.init)[...]).compactMap { $0.flatMap(IndexValue.init) })
        for v in values {
            try db.execute("INSERT INTO entity_values (collection, id, path, kind, num, text) VALUES (?, ?, ?, ?, ?, ?)",
                           [.text(collection), .text(id), .text(path), .text(v.kind), v.num.map { .real($0) } ?? .null, SQLiteValue(v.text)])
        }
    }

    /// The local copies that can match `filter`, read through an index, or
    /// nil when no top-level condition of it is on an indexed path in a form
    /// the index answers (scalar equality, `$in` of scalars, numeric range).
    func candidates(_ collection: String, _ filter: [String: JSONValue]) throws -> [JSONValue]? {
        guard let paths = mirrors[collection]?.indexes, !paths.isEmpty else { return nil }
        for (path, condition) in Self.conjuncts(filter) where paths.contains(path) {
            guard let (clause, values) = Self.indexClause(condition) else { continue }
            let sql = """
                SELECT body FROM entities WHERE collection = ? AND id IN
                (SELECT id FROM entity_values WHERE collection = ? AND path = ? AND (\(clause)))
                """
            return parse(try db.query(sql, [.text(collection), .text(collection), .text(path)] + values))
        }
        return nil
    }

    /// The conditions every matching document meets: the top-level ones and those under `$and`.
    static func conjuncts(_ filter: [String: JSONValue]) -> [(String, JSONValue)] {
        filter.sorted(by: { $0.key < $1.key }).flatMap { key, value -> [(String, JSONValue)] in
            if key == "$and" { return (value.arrayValue ?? []).compactMap(\.objectValue).flatMap(conjuncts) }
            return key.hasPrefix("$") ? [] : [(key, value)]
        }
    }

    /// SQL over `kind`, `num`, `text` that every document matching `condition` satisfies, with its parameters.
    static func indexClause(_ condition: JSONValue) -> (String, [SQLiteValue])? {
        func equals(_ value: JSONValue) -> (String, [SQLiteValue])? {
            guard let v = IndexValue(value) else { return nil }
            return v.text.map { ("(kind = ? AND text = ?)", [.text(v.kind), .text($0)]) } ?? ("(kind = ? AND num = ?)", [.text(v.kind), .real(v.num!)])
        }
        guard case .object(let ops) = condition, ops.keys.contains(where: { $0.hasPrefix("$") }) else { return equals(condition) }
        for (op, operand) in ops.sorted(by: { $0.key < $1.key }) {
            switch op {
            case "$eq": if let c = equals(operand) { return c }
            case "$in":
                guard let list = operand.arrayValue, !list.isEmpty else { continue }
                let parts = list.map(equals)
                guard parts.allSatisfy({ $0 != nil }) else { continue }
                return (parts.map { $0!.0 }.joined(separator: " OR "), parts.flatMap { $0!.1 })
            case "$gt", "$gte", "$lt", "$lte":
                guard case .number(let n) = operand else { continue }
                let sign = ["$gt": ">", "$gte": ">=", "$lt": "<", "$lte": "<="][op]!
                return ("(kind = 'n' AND num \(sign) ?)", [.real(n)])
            default: continue
            }
        }
        return nil
    }
}

/// A declared index: a collection and a dotted path.
struct IndexKey: Hashable {
    let collection: String
    let path: String
}

/// A scalar as the index stores it: numbers and booleans in `num`, strings
/// (in canonical composed form, as Swift's `==` compares them) in `text`.
struct IndexValue: Hashable {
    let kind: String
    let num: Double?
    let text: String?

    init?(_ value: JSONValue) {
        switch value {
        case .number(let n): (kind, num, text) = ("n", n, nil)
        case .bool(let b): (kind, num, text) = ("b", b ? 1 : 0, nil)
        case .string(let s): (kind, num, text) = ("s", nil, s.precomposedStringWithCanonicalMapping)
        default: return nil
        }
    }
}
