import JSON
import Schema
import Store

/// The documents of a collection that fail its schema (stored before the
/// schema, which never rejects them on read): the admin API's
/// `/admin/collections/:name/violations` and `roostd check-schema` walk the
/// collection by id, `scan` documents per page.
struct SchemaReport {
    static let pageRows = 1000
    static let maxBytes = 8 << 20

    struct Failing {
        let id: String
        let violations: [SchemaViolation]
    }

    var failing: [Failing] = []
    var scanned = 0
    /// The `after` of the next page; nil once the whole collection was read.
    var next: String?

    static func check(_ reader: any DocumentReading, _ collection: String, _ schema: JSONSchema, after: String?, scan: Int) throws -> SchemaReport {
        var report = SchemaReport()
        let page = try reader.documentPage(in: collection, after: after, limit: scan)
        var bytes = 0
        for (id, text) in page {
            report.scanned += 1
            bytes += text.utf8.count
            guard case .object(let document) = try JSONParser.parse(text) else { continue }
            do { try SchemaCheck.check(document, in: collection, schema: schema) } catch StoreError.schemaViolation(_, let violations) {
                report.failing.append(Failing(id: id, violations: violations))
            }
            // Big documents: a page stops at `maxBytes` of JSON, so one request stays short.
            if bytes >= maxBytes && report.scanned < page.count { report.next = id; return report }
        }
        report.next = page.count == scan ? page.last?.id : nil
        return report
    }

    var json: JSONObject {
        JSONObject([
            ("scanned", .int(Int64(scanned))),
            ("failing", .array(failing.map { f in .object(JSONObject([("id", .string(f.id)), ("violations", .array(f.violations.map(\.json)))])) })),
            ("next", next.map { .string($0) } ?? .null),
        ])
    }
}
