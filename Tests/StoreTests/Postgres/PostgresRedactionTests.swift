import Foundation
import JSON
import Store
@testable import StorePostgres
import Testing

/// Redaction (fields removed from every row but the caller's own) gives
/// SQLite's `json_remove` text byte for byte; `explain` and `plan` answer
/// with PostgreSQL's own plan.
@Suite("PostgreSQL engine: redaction and plans")
struct PostgresRedactionTests {
    static let documents = [
        #"{"_id":"p1","name":"Ann","email":"a@x","we\"ird":1,"nested":{"email":"keep","l":[1,{"a":"}],"}]}}"#,
        #"{"_id":"p2","email":"b@x","name":"Bé \"B\" \u0001 ☃","n":-0.5e10,"big":12345678901234567890}"#,
        #"{"_id":"p3","list":["email",{"email":2}],"email":null,"t":true,"f":false,"ключ":"значение"}"#,
        #"{"_id":"p4","email":"only"}"#,
        #"{"_id":"p5","name":"none to remove","x":[]}"#,
    ]

    static let redactions: [Redaction] = [
        Redaction(fields: ["email"], exceptID: nil),
        // Not a field name with a double quote: SQLite's path `$."we"ird"` matches nothing, so SQLite keeps it.
        Redaction(fields: ["email", "nested", "ключ", "t"], exceptID: "p2"),
        Redaction(fields: ["email", "_id", "name", "n", "big"], exceptID: "p9"),
        Redaction(fields: [], exceptID: nil),
        Redaction(fields: ["absent"], exceptID: "p1"),
    ]

    static func script(_ r: any DocumentReading) -> [String] {
        var log: [String] = []
        for (n, redaction) in redactions.enumerated() {
            for id in ["p1", "p2", "p3", "p4", "p5", "none"] {
                log.append("get \(n) \(id): " + outcome({ try r.get("people", id: id, scope: .system, redaction: redaction) }))
            }
            let all = FindQuery(filter: json("{}"), sort: [(field: "_id", ascending: true)], limit: 3)
            log.append("find \(n): " + outcome({ try r.find("people", all, scope: .system, redaction: redaction) }))
            log.append("page \(n): " + outcome({ try r.page("people", all, withTotal: true, scope: .system, redaction: redaction) }) { "\($0.documents) \($0.total ?? -1) \($0.next != nil)" })
            var fields = all
            fields.fields = ["name", "email", "nested"]
            log.append("fields \(n): " + outcome({ try r.find("people", fields, scope: .system, redaction: redaction) }))
        }
        return log
    }

    @Test("the same documents and redactions give the same texts on both engines")
    func differential() throws {
        let sqlite = try TestStore(), postgres = try PGTestStore()
        try sqlite.insert("people", Self.documents)
        try postgres.insert("people", Self.documents)
        let expected = Self.script(sqlite.reader)
        let got = Self.script(postgres.reader)
        #expect(got.count == expected.count)
        for (e, g) in zip(expected, got) { #expect(g == e) }
        let p4 = try #require(expected.first { $0.hasPrefix("get 0 p4: ok") })
        #expect(!p4.contains("only") && p4.contains("_acl"), "the email went, the rest stayed: \(p4)")
    }

    @Test("explain lists the statement a list runs with PostgreSQL's plan; plan gives EXPLAIN's lines")
    func explainAndPlan() throws {
        let store = try PGTestStore()
        try store.insert("people", Self.documents)
        let query = FindQuery(filter: json(#"{"name":"Ann"}"#), sort: [(field: "name", ascending: false)], limit: 5)
        let explained = try store.reader.explain("people", query)
        let fields = try #require(explained.objectValue)
        #expect(fields["strategy"] == .string("scan"))
        #expect(fields["order"] == .string("name:-1"))
        let statements = try #require(fields["statements"]?.arrayValue)
        #expect(statements.count == 1)
        let sql = try #require(statements.first?.objectValue?["sql"]?.stringValue)
        #expect(sql.contains("FROM c_") && sql.contains("ORDER BY"))
        let lines = statements.first?.objectValue?["plan"]?.arrayValue?.compactMap(\.stringValue) ?? []
        #expect(lines.contains { $0.contains("Scan") }, "\(lines)")
        #expect(try store.reader.explain("nothing", query).objectValue?["strategy"] == .string("empty"))
        #expect(try store.reader.plan("people", filter: json(#"{"name":"Ann"}"#)).contains { $0.contains("Scan on c_") })
        #expect(try store.reader.plan("nothing", filter: json("{}")).isEmpty)
    }
}
