import JSON
import Schema
import Store

/// Read-rule stamps (`RuleStamp`): every row written gets its collection's
/// stamp, and `restampRows` brings rows written under another one (before a
/// rule changed, or before stamps existed) up to date in small batches. A row
/// whose stamp is not the current one is judged by the whole rule, so this
/// only ever makes reads faster.
extension DocumentWriter {
    public func useSchemas(_ schemas: @escaping @Sendable (String) -> JSONSchema?) { self.schemas = schemas }

    public func useDeclaredGeoPaths(_ paths: @escaping @Sendable (String) -> [String]) { declaredGeoPaths = paths }

    public func useRuleStamps(_ stamps: @escaping @Sendable (String) -> RuleStamp?) {
        ruleStamps = stamps
        restampCursors = [:]
    }

    /// The `rs` and `rb` values of `document` in `collection` (NULL without a stamp).
    func stampValues(_ collection: String, _ document: JSONObject) -> (SQLValue, SQLValue) {
        guard let stamp = ruleStamps(collection) else { return (.null, .null) }
        return (.int(stamp.fingerprint), .int(stamp.bits(of: document)))
    }

    /// Reads up to `limit` rows past each collection's cursor and stamps
    /// those whose stamp is not their collection's current one: a step costs
    /// at most `limit` rows read, however large the table, so the writer is
    /// never held for long. A collection read to its end under a fingerprint
    /// is not read again until the fingerprint changes (writes stamp their rows).
    /// - Returns: true when more may remain.
    public func restampRows(limit: Int) throws -> Bool {
        var left = limit
        let names = try db.prepare("SELECT name FROM _collections ORDER BY id").rows { $0.text(0) }
        for name in names where left > 0 {
            guard let stamp = ruleStamps(name), let layout = try catalog.layout(name) else { continue }
            var cursor = restampCursors[name] ?? (stamp.fingerprint, 0, false)
            if cursor.fingerprint != stamp.fingerprint { cursor = (stamp.fingerprint, 0, false) }
            guard !cursor.done else { continue }
            let rows = try db.prepare("SELECT rid, CASE WHEN rs IS NOT ?2 THEN doc END FROM \(layout.table) WHERE rid > ?1 ORDER BY rid LIMIT ?3")
                .rows([.int(cursor.after), .int(stamp.fingerprint), .int(Int64(left))]) { ($0.int(0), $0.isNull(1) ? nil : $0.text(1)) }
            let update = try db.prepare("UPDATE \(layout.table) SET rs = ?1, rb = ?2 WHERE rid = ?3")
            for (rid, text) in rows {
                cursor.after = rid
                guard let text, case .object(let document)? = try? JSONParser.parse(text) else { continue }
                try update.run([.int(stamp.fingerprint), .int(stamp.bits(of: document)), .int(rid)])
            }
            cursor.done = rows.count < left
            restampCursors[name] = cursor
            left -= rows.count
        }
        return left <= 0
    }
}
