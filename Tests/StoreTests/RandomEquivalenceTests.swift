import Foundation
import JSON
import RoostTestSupport
import Store
import StoreSQLite
import Testing

@Suite("Randomised equivalence with a reference matcher")
struct RandomEquivalenceTests {
    static let valueIndexes = ["a", "b", "o", "o.p", "o.q", "arr", "arr.p", "arr.q", "arr.0", "arr.0.p", "arr.1.q",
                               "t", "t.0", "t.2", "a.p", "a.1", "p", "q"]

    @Test("SQL, indexed SQL and the reference agree", arguments: [UInt64(0x5EED), 20_240_601, 7])
    func equivalence(seed: UInt64) throws {
        var generator = Generator(rng: SeededGenerator(seed: seed))
        let documents = (0..<300).map { generator.document($0) }
        let store = try TestStore()
        try store.insert("plain", documents)
        try store.insert("indexed", documents)
        try store.index("indexed", Self.valueIndexes)
        // Stored documents gain _createdAt/_updatedAt; the reference sees the client's fields.
        var mismatches = 0
        var nonEmpty = 0
        for _ in 0..<200 {
            let filter = generator.filter()
            let expected = Set(documents.filter { Reference.matches($0, filter) }.map { $0["_id"]!.stringValue! })
            if !expected.isEmpty && expected.count < documents.count { nonEmpty += 1 }
            let plain = try store.idSet("plain", .object(filter))
            let indexed = try store.idSet("indexed", .object(filter))
            let counted = try store.reader.count("indexed", filter: .object(filter))
            #expect(counted == expected.count, "count of \(filter.jsonText)")
            if plain != expected || indexed != expected {
                mismatches += 1
                if mismatches <= 8 {
                    let doc = documents.first { d in
                        let id = d["_id"]!.stringValue!
                        return expected.contains(id) != plain.contains(id) || expected.contains(id) != indexed.contains(id)
                    }
                    Issue.record("""
                        filter \(filter.jsonText)
                          reference \(expected.count), plain \(plain.count), indexed \(indexed.count)
                          first differing document: \(doc?.jsonText ?? "-") \
                        reference=\(doc.map { expected.contains($0["_id"]!.stringValue!) } ?? false) \
                        plain=\(doc.map { plain.contains($0["_id"]!.stringValue!) } ?? false) \
                        indexed=\(doc.map { indexed.contains($0["_id"]!.stringValue!) } ?? false)
                        """)
                }
            }
        }
        #expect(mismatches == 0)
        // The generator must exercise selective filters, not just all-or-nothing ones.
        #expect(nonEmpty >= 60, "only \(nonEmpty) selective filters")
    }

    /// Replaces, patches and deletes move index entries by their keys; none
    /// may be left behind or missing. The rewritten collection's index must
    /// hold exactly what a fresh insert of the final documents writes, and
    /// its queries must still agree with the reference.
    @Test("rewrites leave the index exactly as a fresh insert would", arguments: [UInt64(0xD1FF), 99])
    func rewritesKeepTheIndexExact(seed: UInt64) throws {
        var generator = Generator(rng: SeededGenerator(seed: seed))
        let store = try TestStore()
        try store.index("rewritten", Self.valueIndexes + ["loc:geo"])
        try store.index("fresh", Self.valueIndexes + ["loc:geo"])
        var final: [String: JSONObject] = [:]
        var first = (0..<150).map { generator.document($0) }
        for i in first.indices where generator.chance(50) { first[i]["loc"] = .array([.double(Double(i) - 150), .double(1)]) }
        try store.insert("rewritten", first)
        for document in first { final[document["_id"]!.stringValue!] = document }
        for round in 0..<300 {
            let id = "d\(generator.int(150))"
            var body = generator.document(0)
            body["_id"] = nil
            if generator.chance(30) { body["loc"] = .array([.double(Double(round % 360) - 180), .double(2)]) }
            let operation: (DocumentWriter) throws -> String
            switch generator.int(3) {
            case 0:
                operation = { [body] in try $0.replace(in: "rewritten", id: id, body).text }
                body["_id"] = .string(id)
                final[id] = body
            case 1:
                guard let existing = final[id] else { continue }
                operation = { [body] in try $0.patch(in: "rewritten", id: id, body) }
                var merged = JSONValue.object(existing).mergePatched(with: .object(body)).objectValue ?? JSONObject()
                merged["_id"] = .string(id)
                final[id] = merged
            default:
                guard final[id] != nil else { continue }
                operation = { try $0.delete(from: "rewritten", id: id); return "" }
                final[id] = nil
            }
            for result in store.writer.commitBatch([operation]) { _ = try result.get() }
        }
        try store.insert("fresh", Array(final.values))

        let db = try SQLiteConnection(path: store.path, readOnly: true)
        /// Every index entry of `collection` as text, with its document's `_id`;
        /// numbers print alike whether SQLite holds them as integer or real.
        func entries(_ collection: String) throws -> [String] {
            let table = try db.prepare("SELECT id FROM _collections WHERE name = ?1").firstRow([.text(collection)]) { $0.int(0) } ?? -1
            let geo = try db.prepare("SELECT id FROM _indexes WHERE collection_id = ?1 AND kind = 'geo'").firstRow([.int(table)]) { $0.int(0) } ?? -1
            return try db.prepare("""
                SELECT x.path || '|' || x.k || '|' ||
                       CASE WHEN typeof(x.v) IN ('integer', 'real') THEN printf('%.17g', x.v) ELSE quote(x.v) END || '|' || c.id
                  FROM x_\(table) AS x JOIN c_\(table) AS c ON c.rid = x.rid
                UNION ALL SELECT 'orphan entry ' || rid FROM x_\(table) WHERE k <> 0 AND rid NOT IN (SELECT rid FROM c_\(table))
                UNION ALL SELECT 'point ' || c.id || ' ' || g.minX || ',' || g.minY FROM g_\(table)_\(geo) AS g JOIN c_\(table) AS c ON c.rid = g.id
                UNION ALL SELECT 'orphan point ' || id FROM g_\(table)_\(geo) WHERE id NOT IN (SELECT rid FROM c_\(table))
                """).rows { $0.text(0) }.sorted()
        }
        #expect(try entries("rewritten") == entries("fresh"))
        // Multikey marks stay once written, so the rewritten collection may hold more, never fewer.
        func multikeyPaths(_ collection: String) throws -> Set<String> {
            let table = try db.prepare("SELECT id FROM _collections WHERE name = ?1").firstRow([.text(collection)]) { $0.int(0) } ?? -1
            return Set(try db.prepare("SELECT path FROM x_\(table) WHERE k = 0").rows { $0.text(0) })
        }
        #expect(!(try multikeyPaths("fresh")).isEmpty)
        #expect(try multikeyPaths("fresh").isSubset(of: multikeyPaths("rewritten")))
        #expect(try entries("fresh").contains { $0.hasPrefix("point ") })
        #expect(try entries("fresh").count > 300)

        let documents = Array(final.values)
        for _ in 0..<100 {
            let filter = generator.filter()
            let expected = Set(documents.filter { Reference.matches($0, filter) }.map { $0["_id"]!.stringValue! })
            #expect(try store.idSet("rewritten", .object(filter)) == expected, "filter \(filter.jsonText)")
        }
        let box = json(#"{"loc":{"$geoWithin":{"$box":[[-180,-90],[180,90]]}}}"#)
        let withPoints = Set(documents.filter { $0["loc"] != nil }.map { $0["_id"]!.stringValue! })
        #expect(try store.idSet("rewritten", box) == withPoints)
    }
}
