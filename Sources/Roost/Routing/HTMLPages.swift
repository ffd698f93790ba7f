import HTTP
import JSON

/// The few HTML pages Roost serves: the daemon's front page and a table
/// view of a collection for browsers. Every value is escaped.
enum HTMLPages {
    static let style = "body{font-family:system-ui,sans-serif;margin:2em;color:#222}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:4px 8px;text-align:left;vertical-align:top}th{background:#f4f4f4}code{background:#f4f4f4;padding:1px 4px}"

    static func page(title: String, body: String) -> String {
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>\(HTMLEscape.escape(title))</title><style>\(style)</style></head><body>\(body)</body></html>"
    }

    /// Columns of the table view; a document's other fields share one last cell.
    static let maxColumns = 100

    /// A table of `documents`, one column per field in order of first
    /// appearance. It costs time linear in the documents' size: at most
    /// `maxColumns` columns, each cell found by the object's hashed index,
    /// and any further fields written as JSON in a final "…" cell.
    static func table(collection: String, documents: [String]) -> String {
        var rows: [JSONObject] = []
        var columns: [String] = []
        var seen: Set<String> = []
        var overflow = false
        for text in documents {
            guard case .object(let o) = (try? JSONParser.parse(text)) ?? .null else { continue }
            rows.append(o)
            for key in o.keys where !seen.contains(key) {
                guard columns.count < maxColumns else { overflow = true; break }
                seen.insert(key)
                columns.append(key)
            }
        }
        var html = "<h1>\(HTMLEscape.escape(collection))</h1><p>\(rows.count) document(s)</p><table><thead><tr>"
        for c in columns { html += "<th>\(HTMLEscape.escape(c))</th>" }
        if overflow { html += "<th>…</th>" }
        html += "</tr></thead><tbody>"
        for row in rows {
            html += "<tr>"
            for c in columns { html += "<td>\(HTMLEscape.escape(cell(row[c])))</td>" }
            if overflow {
                let rest = JSONObject(row.members.filter { !seen.contains($0.key) })
                html += "<td>\(rest.isEmpty ? "" : HTMLEscape.escape(rest.jsonText))</td>"
            }
            html += "</tr>"
        }
        html += "</tbody></table>"
        return page(title: "\(collection) · Roost", body: html)
    }

    static func cell(_ value: JSONValue?) -> String {
        switch value {
        case .none: return ""
        case .string(let s): return s
        case .some(let v): return v.jsonText
        }
    }

    /// `/openapi.yaml`: the repository's openapi.yaml, compiled in by the EmbedOpenAPI plugin.
    static let openAPIBytes = Array(OpenAPIDocument.text.utf8)

    /// The API areas the front page lists, each with its main endpoints.
    static let apiAreas: [(name: String, endpoints: [String])] = [
        ("Collections", ["GET|POST /:collection?query=&sort=&limit=&skip=&fields=", "GET /:collection/_count",
                         "GET|PUT|PATCH|DELETE /:collection/:id"]),
        ("Files", ["POST /files", "GET|DELETE /files/:id", "GET /files/:id/meta", "GET /files/:id/thumbnail?w="]),
        ("Accounts", ["POST /users", "POST /login", "POST /logout", "GET /users/me", "GET|PUT|PATCH|DELETE /users/:id"]),
        ("Messaging", ["POST /messages", "GET /threads", "GET /messages?query="]),
        ("Live updates", ["GET /events?subscribe=", "GET /:collection/_live", "GET /users/_live", "GET /files/_live"]),
        ("Delta sync", ["GET /:collection/_deltaset?since=", "GET /users/_deltaset", "GET /files/_deltaset"]),
        ("Batch", ["POST /_batch"]),
        ("Push", ["GET|POST /push/devices", "DELETE /push/devices/:token"]),
        ("Webhooks (admin)", ["GET|POST /admin/webhooks/endpoints", "GET /admin/webhooks/deliveries", "GET /admin/hooks"]),
        ("Admin", ["/_/ (console)", "GET|POST /admin/backups", "GET /metrics", "GET /healthz", "GET /readyz"]),
    ]

    static func home(version: String?, listen: [String], startedAt: String, collections: [(name: String, count: Int)]) -> String {
        var html = "<h1>Roost\(version.map { " " + HTMLEscape.escape($0) } ?? "")</h1><p>A self-hosted mobile backend."
        html += listen.isEmpty ? "</p>" : " Serving since \(HTMLEscape.escape(startedAt)) on \(HTMLEscape.escape(listen.joined(separator: ", "))).</p>"
        html += "<h2>Collections</h2>"
        if collections.isEmpty {
            html += "<p>None yet. Create one with <code>curl -X POST -H 'Content-Type: application/json' -d '{\"name\":\"x\"}' /locations</code>.</p>"
        } else {
            html += "<table><thead><tr><th>collection</th><th>documents</th></tr></thead><tbody>"
            for c in collections {
                let name = HTMLEscape.escape(c.name)
                html += "<tr><td><a href=\"/\(name)\">\(name)</a></td><td>\(c.count)</td></tr>"
            }
            html += "</tbody></table>"
        }
        html += "<h2>API</h2><p>Every endpoint, its parameters and answers: <a href=\"/openapi.yaml\">/openapi.yaml</a> (OpenAPI 3.1).</p>"
        html += "<table><thead><tr><th>area</th><th>endpoints</th></tr></thead><tbody>"
        for area in apiAreas {
            html += "<tr><td>\(area.name)</td><td>\(area.endpoints.map { "<code>\(HTMLEscape.escape($0))</code>" }.joined(separator: " "))</td></tr>"
        }
        html += "</tbody></table>"
        return page(title: "Roost", body: html)
    }
}
