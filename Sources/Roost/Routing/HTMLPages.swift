import Console
import HTTP
import JSON
import Store

/// The few HTML pages Roost serves: the daemon's front page and a table
/// view of a collection for browsers. Every value is escaped.
enum HTMLPages {
    /// Beside the console's own stylesheet, so these pages look like the console.
    static let style = "body{padding:1.5rem}.page{max-width:64rem;margin:0 auto}.panel{background:var(--panel);border:1px solid var(--line);border-radius:10px;padding:1rem 1.25rem;margin:0 0 1rem}table{border-collapse:collapse;background:var(--panel)}td,th{border:1px solid var(--line);padding:4px 8px;text-align:left;vertical-align:top}th{background:#eef1f5}td{white-space:pre-line;word-break:break-word}.links a{margin-right:1.25rem;font-weight:600}.brand{color:var(--ink);margin-bottom:.5rem}.brand h1{margin:0}"

    static func page(title: String, body: String) -> String {
        let assets = ConsoleSite.assetBase
        return "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            + "<title>\(HTMLEscape.escape(title))</title><link rel=\"icon\" href=\"\(assets)/icon.svg\" type=\"image/svg+xml\">"
            + "<link rel=\"stylesheet\" href=\"\(assets)/style.css\"><style>\(style)</style></head><body><div class=\"page\">\(body)</div></body></html>"
    }

    /// Columns of the table view; a document's other fields share one last cell.
    static let maxColumns = 100

    /// A table of `documents`, one column per field in order of first
    /// appearance, and a link to the next page. It costs time linear in the
    /// documents' size: at most `maxColumns` columns, each cell found by the
    /// object's hashed index, and any further fields written as JSON in a final "…" cell.
    static func table(collection: String, documents: [String], request: Request? = nil, next: String? = nil) -> String {
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
        var html = "<h1>\(HTMLEscape.escape(collection))</h1><p>\(rows.count) document(s) on this page"
        if let request, let next { html += " · <a id=\"next-page\" href=\"\(HTMLEscape.escape(nextPageLink(request, next)))\">next page</a>" }
        html += " · <a href=\"/\">Roost</a></p><table><thead><tr>"
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

    /// The same list with `after=` the next page's position (and no `skip`).
    static func nextPageLink(_ request: Request, _ next: String) -> String {
        var items = request.query.filter { $0.key != "after" && $0.key != "skip" }.sorted { $0.key < $1.key }
        items.append(("after", next))
        return request.path + "?" + items.map { percentEncoded($0.key) + "=" + percentEncoded($0.value) }.joined(separator: "&")
    }

    static func percentEncoded(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "~"):
                out.append(Character(Unicode.Scalar(byte)))
            default:
                out += "%" + (byte < 16 ? "0" : "") + String(byte, radix: 16, uppercase: true)
            }
        }
        return out
    }

    /// A cell for people: text as is, a list of scalars comma-separated, an
    /// object (such as `_acl`) one `key: value` per line; deeper values as JSON.
    static func cell(_ value: JSONValue?) -> String {
        switch value {
        case .none: return ""
        case .string(let s): return s
        case .array(let items)? where items.allSatisfy(isScalar): return items.map(scalarText).joined(separator: ", ")
        case .object(let o)?:
            return o.members.map { member in
                let v = member.value
                if case .array(let items) = v, items.allSatisfy(isScalar) { return "\(member.key): " + items.map(scalarText).joined(separator: ", ") }
                return "\(member.key): " + (isScalar(v) ? scalarText(v) : v.jsonText)
            }.joined(separator: "\n")
        case .some(let v): return v.jsonText
        }
    }

    static func isScalar(_ value: JSONValue) -> Bool {
        switch value {
        case .array, .object: return false
        default: return true
        }
    }

    static func scalarText(_ value: JSONValue) -> String {
        if case .string(let s) = value { return s }
        return value.jsonText
    }

    /// The HTML answer to a browser that may not read a collection without signing in.
    static func signInHint(collection: String) -> String {
        let name = HTMLEscape.escape(collection)
        return page(title: "\(collection) · Roost", body: """
            <h1>\(name)</h1><div class="panel"><p><strong>Sign in to read this collection.</strong> \
            Its documents are for signed-in users: an app sends its session token as <code>Authorization: Bearer &lt;token&gt;</code>, \
            which a browser's address bar cannot do.</p><p>Get a token with <code>curl -X POST -H 'Content-Type: application/json' \
            -d '{"username":"…","password":"…"}' \(HTMLEscape.escape("/login"))</code>, then \
            <code>curl -H 'Authorization: Bearer $TOKEN' /\(name)</code>. Operators can browse every collection in the \
            <a href="/_/">admin console</a>.</p><p><a href="/">Roost</a></p></div>
            """)
    }

    /// `/openapi.yaml`: the repository's openapi.yaml, compiled in by the EmbedFiles plugin.
    static let openAPIBytes = Array(OpenAPIDocument.text.utf8)

    /// The API areas the front page lists, each with its main endpoints.
    static let apiAreas: [(name: String, endpoints: [String])] = [
        ("Collections", ["GET|POST /:collection?query=&sort=&limit=&skip=&fields=", "GET /:collection/_count",
                         "GET|PUT|PATCH|DELETE /:collection/:id"]),
        ("Files", ["POST /files", "GET|DELETE /files/:id", "GET /files/:id/meta", "GET /files/:id/thumbnail?w=", "POST /files/:id/url"]),
        ("Accounts", ["POST /users", "POST /login", "POST /logout", "GET /users/me", "GET|PUT|PATCH|DELETE /users/:id"]),
        ("Messaging", ["POST /messages", "GET /threads", "GET /messages?query="]),
        ("Live updates", ["GET /events?subscribe=", "GET /:collection/_live", "GET /users/_live", "GET /files/_live"]),
        ("Delta sync", ["GET /:collection/_deltaset?since=", "GET /users/_deltaset", "GET /files/_deltaset"]),
        ("Batch", ["POST /_batch"]),
        ("Push", ["GET|POST /push/devices", "DELETE /push/devices/:token"]),
        ("Webhooks (admin)", ["GET|POST /admin/webhooks/endpoints", "GET /admin/webhooks/deliveries", "GET /admin/hooks"]),
        ("Admin", ["/_/ (console)", "GET|POST /admin/backups", "GET /metrics", "GET /healthz", "GET /readyz"]),
    ]

    /// A collection as the front page lists it; `count` is nil when the caller may not see every row.
    struct VisibleCollection {
        let name: String
        let level: AccessScope.Level
        let count: Int?
    }

    static func home(version: String?, listen: [String], startedAt: String, collections: [VisibleCollection], signedIn: Bool) -> String {
        var html = "<div class=\"brand\"><img src=\"\(ConsoleSite.assetBase)/icon.svg\" alt=\"\"><h1>Roost\(version.map { " " + HTMLEscape.escape($0) } ?? "")</h1></div>"
        html += "<p>A self-hosted mobile backend."
        html += listen.isEmpty ? "</p>" : " Serving since \(HTMLEscape.escape(startedAt)) on \(HTMLEscape.escape(listen.joined(separator: ", "))).</p>"
        html += "<p class=\"panel links\"><a href=\"/_/\">Admin console</a><a href=\"/openapi.yaml\">API reference (openapi.yaml)</a><a href=\"/healthz\">Health</a></p>"
        html += "<div class=\"panel\"><h2>Collections you can see</h2>"
        if collections.isEmpty {
            html += "<p>None yet" + (signedIn ? "." : " for anonymous visitors: public collections appear here, and signed-in users (<code>Authorization: Bearer &lt;token&gt;</code>) see more.") + "</p>"
            html += "<p>Create one: <code>curl -X POST -H 'Content-Type: application/json' -H 'Authorization: Bearer $TOKEN' -d '{\"text\":\"hi\"}' /notes</code></p>"
        } else {
            html += "<table><thead><tr><th>collection</th><th>access</th><th>documents</th></tr></thead><tbody>"
            for c in collections {
                let name = HTMLEscape.escape(c.name)
                html += "<tr><td><a href=\"/\(name)\">\(name)</a></td><td>\(c.level.rawValue)</td><td>\(c.count.map(String.init) ?? "your own only")</td></tr>"
            }
            html += "</tbody></table>"
            if !signedIn { html += "<p class=\"muted\">Signed-in users see shared and private collections too.</p>" }
        }
        html += "</div><div class=\"panel\"><h2>API</h2><p>Every endpoint, its parameters and answers: <a href=\"/openapi.yaml\">/openapi.yaml</a> (OpenAPI 3.1).</p>"
        html += "<table><thead><tr><th>area</th><th>endpoints</th></tr></thead><tbody>"
        for area in apiAreas {
            html += "<tr><td>\(area.name)</td><td>\(area.endpoints.map { "<code>\(HTMLEscape.escape($0))</code>" }.joined(separator: " "))</td></tr>"
        }
        html += "</tbody></table></div>"
        return page(title: "Roost", body: html)
    }
}
