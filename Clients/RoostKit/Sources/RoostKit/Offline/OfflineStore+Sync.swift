import Foundation

extension OfflineStore {
    /// Pulls one mirror's changes since its cursor with `GET /:collection/_deltaset`.
    ///
    /// Each page's changes and deletes, and the cursor after them, are applied
    /// in one local transaction. A first sync (no cursor) replaces the mirror;
    /// `410 CursorExpired` drops the cursor and resyncs from scratch once.
    /// Documents with queued writes are left alone. A server without
    /// `_deltaset` (404) is read whole instead (``pullWhole(_:_:)``).
    func pull(_ mirror: Mirror, _ report: inout SyncReport) async throws {
        let filter = mirror.filter?.json ?? "{}"
        var cursor = try db.query("SELECT cursor FROM sync_state WHERE collection = ? AND filter = ?",
                                  [.text(mirror.name), .text(filter)]).first?[0].text
        var fresh = cursor == nil, resynced = false
        while true {
            var query: [(String, String)] = [("limit", "500")]
            if let cursor { query.append(("since", cursor)) }
            if let p = mirror.filter { query.append(("query", p.json)) }
            let reply = try await client.raw(client.request("GET", [mirror.name, "_deltaset"], query: query))
            if reply.status == 410, !resynced {
                (cursor, fresh, resynced) = (nil, true, true)
                report.resyncs += 1
                continue
            }
            if reply.status == 404 { return try await pullWhole(mirror, &report) }
            guard reply.status < 400 else { throw RoostError.server(ServerError(response: reply.response, body: reply.data)) }
            let page = try reply.decode(DeltaPage.self)
            let next = page.cursor ?? reply.header("X-Roost-Cursor")
            let (changed, deleted) = try db.transaction { () -> (Int, Int) in
                if fresh { try dropMirror(mirror.name) }
                let changed = try apply(mirror.name, changed: page.changed)
                var deleted = 0
                for ref in page.deleted where try !hasPending(mirror.name, ref._id) {
                    try remove(mirror.name, ref._id)
                    deleted += 1
                }
                try db.execute("INSERT OR REPLACE INTO sync_state (collection, filter, cursor) VALUES (?, ?, ?)",
                               [.text(mirror.name), .text(filter), SQLiteValue(next)])
                return (changed, deleted)
            }
            report.changed += changed
            report.deleted += deleted
            fresh = false
            cursor = next
            if page.more != true || next == nil { return }
        }
    }

    /// Reads a whole mirror with ordinary list requests (for servers without
    /// `_deltaset`) and replaces the local copies in one transaction.
    func pullWhole(_ mirror: Mirror, _ report: inout SyncReport) async throws {
        var all: [JSONValue] = []
        let page = 1000
        while true {
            var query = Query(mirror.filter).sorted(by: "_id").limit(page).skip(all.count)
            query.resolve = []
            let rows = try await client.call("GET", [mirror.name], query: query.parameters).decode([JSONValue].self)
            all += rows
            if rows.count < page { break }
        }
        let (changed, deleted) = try db.transaction { () -> (Int, Int) in
            let keep = Set(all.compactMap { $0["_id"]?.stringValue })
            var deleted = 0
            for row in try db.query("SELECT id FROM entities WHERE collection = ?", [.text(mirror.name)]) {
                guard let id = row[0].text, !keep.contains(id), try !hasPending(mirror.name, id) else { continue }
                try remove(mirror.name, id)
                deleted += 1
            }
            return (try apply(mirror.name, changed: all), deleted)
        }
        report.changed += changed
        report.deleted += deleted
    }

    /// Upserts server copies, except of documents with queued writes; returns how many changed.
    private func apply(_ collection: String, changed: [JSONValue]) throws -> Int {
        var count = 0
        for entity in changed {
            guard let id = entity["_id"]?.stringValue, try !hasPending(collection, id) else { continue }
            if try document(collection, id) != entity {
                try store(collection, id, entity)
                count += 1
            }
        }
        return count
    }

    /// Removes every local copy of `collection` that has no queued write.
    private func dropMirror(_ collection: String) throws {
        try db.execute("DELETE FROM entities WHERE collection = ? AND NOT EXISTS (SELECT 1 FROM outbox o WHERE o.collection = entities.collection AND o.id = entities.id)",
                       [.text(collection)])
        try db.execute("DELETE FROM entity_values WHERE collection = ? AND NOT EXISTS (SELECT 1 FROM entities e WHERE e.collection = entity_values.collection AND e.id = entity_values.id)",
                       [.text(collection)])
        changed(collection)
    }

    /// Applies one live event to the mirror: creates, updates and entries are
    /// stored, deletes and departures removed (documents with queued writes
    /// are left alone); `reset` resyncs the collection from scratch.
    ///
    /// The event's id is not used as the mirror's delta cursor: the server
    /// answers `_deltaset?since=<live event id>` with 410 `CursorExpired`
    /// (the id is a live-stream cursor), which would force a full resync.
    public func apply(_ event: LiveEvent) async throws {
        guard let mirror = mirrors[event.collection] else { return }
        if event.kind == .reset {
            try db.execute("DELETE FROM sync_state WHERE collection = ?", [.text(mirror.name)])
            var report = SyncReport()
            return try await pull(mirror, &report)
        }
        guard try !hasPending(event.collection, event.entityID) else { return }
        switch event.kind {
        case .create, .update, .enter:
            if let entity = event.entity { try store(event.collection, event.entityID, entity) }
        case .delete, .leave:
            try remove(event.collection, event.entityID)
        default:
            break
        }
    }
}

/// One page of `GET /:collection/_deltaset`.
struct DeltaPage: Decodable {
    let changed: [JSONValue]
    let deleted: [DeletedRef]
    let cursor: String?
    let more: Bool?

    struct DeletedRef: Decodable { let _id: String }
}
