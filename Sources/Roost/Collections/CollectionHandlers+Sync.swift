import EventLoop
import HTTP
import JSON
import Store

/// `GET /:collection/_deltaset`: what changed since a cursor, for offline
/// clients (see `any DocumentReading.delta`).
extension CollectionHandlers {
    static let defaultDeltaLimit = 1000
    static let maxDeltaLimit = 10000

    func deltaset(_ collection: String, _ request: Request, _ out: ResponseWriter, level: AccessScope.Level? = nil) {
        let access = self.access
        jobs.read(request, out, in: collection, level: level) { reader, scope in
            let principal = scope.principal
            try scope.checkCollectionRead() // who may ask comes before what they ask
            let filter = try ListParameters.filter(request)
            try access.checkHiddenFields(collection, principal, filter: filter, sort: [])
            let seal = try reader.cursorSeal()
            let page = try reader.delta(collection, since: try Self.cursor(request, seal), filter: filter, limit: try Self.deltaLimit(request),
                                        scope: scope, redaction: access.redaction(collection, principal))
            let deleted = page.deleted.map { id -> String in "{\"_id\":\(JSONWriter.quoted(id))}" }
            let token = seal.token(page.cursor)
            var response = Response.json(200, "{\"changed\":[\(page.changed.joined(separator: ","))],\"deleted\":[\(deleted.joined(separator: ","))],\"cursor\":\"\(token)\",\"more\":\(page.more)}")
            response.headers.add("X-Roost-Cursor", token)
            response.headers.add("Cache-Control", "no-store")
            return response
        }
    }

    /// `since`, opened: a token another database sealed (or a changed one)
    /// comes back as `FeedCursor.foreign`, which the delta refuses with 410.
    static func cursor(_ request: Request, _ seal: CursorSeal) throws -> FeedCursor? {
        guard let text = request.query["since"], !text.isEmpty else { return nil }
        guard let cursor = seal.open(text) else {
            throw HTTPError(.invalidCursor, "since must be a cursor returned by _deltaset of this collection.")
        }
        return cursor
    }

    static func deltaLimit(_ request: Request) throws -> Int {
        guard let text = request.query["limit"] else { return defaultDeltaLimit }
        guard let n = Int(text), (1...maxDeltaLimit).contains(n) else {
            throw HTTPError(.invalidQuery, "limit must be a whole number from 1 to \(maxDeltaLimit).")
        }
        return n
    }
}
