import Foundation

/// What the outbox does with a write the server refused: a conflict goes to
/// the resolver, a write that cannot succeed to the dead-letter list.
extension OfflineStore {
    /// A write the server refused because the document changed: ask the
    /// resolver (unless this write has met more than three conflicts in a row,
    /// then the server's copy wins). Returns true when the write was rewritten
    /// in place and should be sent again.
    ///
    /// Writes queued while the resolver is awaited (the user kept editing) are
    /// kept and applied on top of the resolution; only the writes that were
    /// queued when the resolver was asked (part of the local copy it saw) are
    /// folded into it.
    func conflict(_ op: PendingWrite, server: JSONValue?, reason: String, _ report: inout SyncReport) async throws -> Bool {
        report.conflicts += 1
        try db.execute("UPDATE outbox SET conflicts = conflicts + 1 WHERE seq = ?", [.integer(op.sequence)])
        let rounds = try db.query("SELECT conflicts FROM outbox WHERE seq = ?", [.integer(op.sequence)]).first?[0].integer ?? 0
        let local = try document(op.collection, op.id)
        let seen = try db.query("SELECT coalesce(max(seq), 0) FROM outbox").first?[0].integer ?? 0
        let resolution = rounds > 3 ? .keepServer
            : await resolver(Conflict(collection: op.collection, id: op.id, operation: op.operation, local: local, server: server))
        let etag = server?["_updatedAt"]?.stringValue.map { "\"\($0)\"" }
        return try db.transaction { () -> Bool in
            // The resolver's run may have raced with another: the write must still be queued.
            guard try !db.query("SELECT 1 FROM outbox WHERE seq = ?", [.integer(op.sequence)]).isEmpty else { return false }
            let later = try laterWrites(op, after: seen)
            let wanted: JSONValue?
            switch resolution {
            case .keepServer:
                try recordConflict(op, local: local, server: server, reason: reason)
                try db.execute("DELETE FROM outbox WHERE collection = ? AND id = ? AND seq BETWEEN ? AND ?",
                               [.text(op.collection), .text(op.id), .integer(op.sequence), .integer(seen)])
                try db.execute("UPDATE outbox SET if_match = ? WHERE collection = ? AND id = ? AND seq > ?",
                               [SQLiteValue(etag), .text(op.collection), .text(op.id), .integer(seen)])
                try storeOrRemove(op.collection, op.id, Self.replay(later, on: server))
                return false
            case .keepLocal: wanted = local
            case .merge(let merged): wanted = merged
            }
            // Rewrite this write in place as the whole wanted state, against the server's version.
            try db.execute("DELETE FROM outbox WHERE collection = ? AND id = ? AND seq > ? AND seq <= ?",
                           [.text(op.collection), .text(op.id), .integer(op.sequence), .integer(seen)])
            if wanted == nil, server == nil {
                try db.execute("DELETE FROM outbox WHERE seq = ?", [.integer(op.sequence)])
            } else {
                let (kind, body): (PendingWrite.Operation, JSONValue?) = switch (wanted, server) {
                case (nil, _): (.delete, nil)
                case (let w?, nil): (.create, Self.writable(w, id: op.id))
                case (let w?, _?): (.replace, Self.writable(w, id: op.id))
                }
                try db.execute("UPDATE outbox SET op = ?, body = ?, if_match = ? WHERE seq = ?",
                               [.text(kind.rawValue), try body.map { .blob(try $0.jsonData()) } ?? .null,
                                SQLiteValue(kind == .create ? nil : etag), .integer(op.sequence)])
            }
            var base = wanted
            if var w = base, let server { for key in ["_updatedAt", "_createdAt", "_acl"] { w[key] = server[key] }; base = w }
            try storeOrRemove(op.collection, op.id, Self.replay(later, on: base))
            return true
        }
    }

    /// The queued writes of `op`'s document made after sequence `seen`.
    func laterWrites(_ op: PendingWrite, after seen: Int64) throws -> [PendingWrite] {
        try db.query("SELECT seq, collection, id, op, body, if_match FROM outbox WHERE collection = ? AND id = ? AND seq > ? ORDER BY seq",
                     [.text(op.collection), .text(op.id), .integer(seen)]).map(Self.pending)
    }

    /// A document with `writes` applied in order, as the local copy shows them.
    static func replay(_ writes: [PendingWrite], on base: JSONValue?) -> JSONValue? {
        writes.reduce(base) { document, write in
            switch write.operation {
            case .delete: return nil
            case .patch: return document.map { $0.merging(patch: write.body ?? [:]) }
            case .create, .replace:
                guard var body = write.body else { return document }
                for key in ["_updatedAt", "_createdAt"] { body[key] = document?[key] }
                if body["_acl"] == nil { body["_acl"] = document?["_acl"] }
                return body
            }
        }
    }

    /// Keeps the local copy of a lost write in `conflicts` for the app to show.
    func recordConflict(_ op: PendingWrite, local: JSONValue?, server: JSONValue?, reason: String) throws {
        try db.execute("INSERT INTO conflicts (collection, id, op, local, server, reason, at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                       [.text(op.collection), .text(op.id), .text(op.operation.rawValue),
                        try local.map { .blob(try $0.jsonData()) } ?? .null,
                        try server.map { .blob(try $0.jsonData()) } ?? .null, .text(reason), .text(RoostDate.format(Date()))])
    }

    /// Moves `op` and the later queued writes of its document (they build on
    /// it) to the dead-letter list, and puts the server's copy back in the
    /// mirror. Returns how many writes moved.
    func deadLetter(_ op: PendingWrite, status: Int, error: ServerError) async throws -> Int {
        let server = try await fetch(op.collection, op.id)
        return try db.transaction { () -> Int in
            let rows = try db.query("SELECT seq, collection, id, op, body, if_match, attempts FROM outbox WHERE collection = ? AND id = ? AND seq >= ? ORDER BY seq",
                                    [.text(op.collection), .text(op.id), .integer(op.sequence)])
            for row in rows {
                let write = Self.pending(row)
                let message = write.sequence == op.sequence ? "\(error.code.rawValue): \(error.message)" : "follows write \(op.sequence), which the server refused"
                try db.execute("""
                    INSERT INTO dead_letters (outbox_seq, collection, id, op, body, if_match, attempts, status, error, at)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """, [.integer(write.sequence), .text(write.collection), .text(write.id), .text(write.operation.rawValue),
                          row[4], row[5], row[6], write.sequence == op.sequence ? .integer(Int64(status)) : .null,
                          .text(message), .text(RoostDate.format(Date()))])
                try db.execute("DELETE FROM outbox WHERE seq = ?", [.integer(write.sequence)])
            }
            try storeOrRemove(op.collection, op.id, server)
            return rows.count
        }
    }
}
