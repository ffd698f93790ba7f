import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension OfflineStore {
    /// Sends the outbox, then pulls every mirror's changes.
    ///
    /// Queued writes go in order (per document, always in order); each is
    /// removed only once the server has answered it, so a write interrupted by
    /// a crash or a dropped connection is sent again. A replayed write the
    /// server already holds (its answer was lost) counts as sent.
    ///
    /// - No network: throws ``RoostError/unreachable(_:)``, everything stays
    ///   queued, and nothing is counted against any write.
    /// - A server busy or shutting down (429, 503 `Overloaded`), or a session
    ///   that ended (401): throws, everything stays queued.
    /// - A write the server fails (500 `HookFailed`, …) waits, with the later
    ///   writes of that document, while the other documents' writes go on; after
    ///   ``maxAttempts`` such answers it moves to ``deadLetters()``. A write the
    ///   server refuses for good (400, 403, 413, …) moves there at once.
    /// - A mirror the server refuses is reported in ``SyncReport/mirrorFailures``;
    ///   the other mirrors are pulled.
    ///
    /// Concurrent calls share one run.
    @discardableResult
    public func sync() async throws -> SyncReport {
        if let running { return try await running.value }
        let task = Task { try await self.runSync() }
        running = task
        defer { running = nil }
        return try await task.value
    }

    private func runSync() async throws -> SyncReport {
        var report = SyncReport()
        try await pushOutbox(&report)
        for mirror in mirrors.values.sorted(by: { $0.name < $1.name }) {
            do { try await pull(mirror, &report) } catch let error as RoostError where !error.stopsSync {
                report.mirrorFailures[mirror.name] = error.description
            }
        }
        report.pending = try count("outbox")
        report.deadLetters = try count("dead_letters")
        return report
    }

    private func count(_ table: String) throws -> Int {
        Int(try db.query("SELECT count(*) FROM \(table)").first?[0].integer ?? 0)
    }

    /// The next queued write after `sequence`.
    private func nextWrite(after sequence: Int64) throws -> PendingWrite? {
        try db.query("SELECT seq, collection, id, op, body, if_match FROM outbox WHERE seq > ? ORDER BY seq LIMIT 1",
                     [.integer(sequence)]).first.map(Self.pending)
    }

    /// Sends queued writes in order until every one has been answered once.
    func pushOutbox(_ report: inout SyncReport) async throws {
        var after: Int64 = 0
        var waiting: Set<DocumentKey> = []   // documents whose write failed in this run: their later writes wait
        while let op = try nextWrite(after: after) {
            after = op.sequence
            let key = DocumentKey(collection: op.collection, id: op.id)
            if waiting.contains(key) { continue }
            let reply = try await client.raw(request(for: op))
            let code = reply.status >= 400 ? ServerError(response: reply.response, body: reply.data).code : nil
            switch (reply.status, op.operation) {
            case (200..<300, .delete), (404, .delete):
                try finish(op, server: nil)
                report.sent += 1
            case (200..<300, _):
                try finish(op, server: try JSONValue.parse(reply.data))
                report.sent += 1
            case (409, .create), (412, .create):
                // An earlier attempt may have created it before its answer was lost.
                let server = try await fetch(op.collection, op.id)
                if let server, server["_acl"]?["creator"]?.stringValue == client.userID {
                    try finish(op, server: server)
                    report.sent += 1
                } else if try await conflict(op, server: server, reason: "Conflict", &report) {
                    after = op.sequence - 1   // rewritten in place: send it again now
                }
            case (412, _), (404, _):
                let server = try await fetch(op.collection, op.id)
                if let server, Self.alreadyApplied(op, server) {
                    // The write reached the server before; only its answer was lost.
                    try finish(op, server: server)
                    report.sent += 1
                } else if try await conflict(op, server: server, reason: reply.status == 412 ? "PreconditionFailed" : "NotFound", &report) {
                    after = op.sequence - 1
                }
            case (401, _), (408, _), (429, _):
                throw try stop(op, reply)
            case (503, _) where code != .hookTimeout:
                throw try stop(op, reply)
            case (500..., _):
                // This write fails on the server (a hook or script, a bug): try again in a later sync, then give up on it.
                try db.execute("UPDATE outbox SET attempts = attempts + 1, last_error = ? WHERE seq = ?",
                               [.text("\(reply.status) \(code?.rawValue ?? "")"), .integer(op.sequence)])
                let attempts = try db.query("SELECT attempts FROM outbox WHERE seq = ?", [.integer(op.sequence)]).first?[0].integer ?? 0
                if attempts >= Int64(maxAttempts) {
                    report.deadLettered += try await deadLetter(op, status: reply.status, error: ServerError(response: reply.response, body: reply.data))
                } else {
                    report.failed += 1
                    waiting.insert(key)
                }
            default:
                // Refused for good (invalid, forbidden, too large): retrying cannot help.
                report.deadLettered += try await deadLetter(op, status: reply.status, error: ServerError(response: reply.response, body: reply.data))
            }
        }
    }

    /// Notes why the push stopped and returns the error to throw.
    private func stop(_ op: PendingWrite, _ reply: RoostClient.Reply) throws -> RoostError {
        try db.execute("UPDATE outbox SET last_error = ? WHERE seq = ?", [.text("HTTP \(reply.status)"), .integer(op.sequence)])
        return RoostError.server(ServerError(response: reply.response, body: reply.data))
    }

    private func request(for op: PendingWrite) throws -> URLRequest {
        let body = try op.body.map { try $0.jsonData() }
        var headers: [String: String] = [:]
        if let etag = op.ifMatch { headers["If-Match"] = etag }
        switch op.operation {
        case .create: return client.request("PUT", [op.collection, op.id], headers: ["If-None-Match": "*"], body: body)
        case .replace: return client.request("PUT", [op.collection, op.id], headers: headers, body: body)
        case .patch: return client.request("PATCH", [op.collection, op.id], headers: headers, body: body)
        case .delete: return client.request("DELETE", [op.collection, op.id], headers: headers)
        }
    }

    /// The server's current copy, or nil when it has none (or you may not read it).
    func fetch(_ collection: String, _ id: String) async throws -> JSONValue? {
        let reply = try await client.raw(client.request("GET", [collection, id]))
        if reply.status == 404 { return nil }
        guard reply.status < 400 else { throw RoostError.server(ServerError(response: reply.response, body: reply.data)) }
        return try JSONValue.parse(reply.data)
    }

    /// Whether the server's copy already holds what `op` writes: a patch that
    /// changes nothing in it, or a replacement equal to it (server fields aside).
    static func alreadyApplied(_ op: PendingWrite, _ server: JSONValue) -> Bool {
        guard let body = op.body else { return false }
        switch op.operation {
        case .patch: return server.merging(patch: body) == server
        case .replace: return userFields(server) == userFields(body)
        case .create, .delete: return false
        }
    }

    private static func userFields(_ document: JSONValue) -> [String: JSONValue] {
        (document.objectValue ?? [:]).filter { !$0.key.hasPrefix("_") }
    }

    /// A write the server accepted: drop it, move later writes of the same
    /// document onto the new version, and take the server's copy when nothing
    /// else is queued for it.
    func finish(_ op: PendingWrite, server: JSONValue?) throws {
        try db.transaction {
            try db.execute("DELETE FROM outbox WHERE seq = ?", [.integer(op.sequence)])
            guard let server, let updated = server["_updatedAt"]?.stringValue else { return }
            try db.execute("UPDATE outbox SET if_match = ? WHERE collection = ? AND id = ? AND seq > ?",
                           [.text("\"\(updated)\""), .text(op.collection), .text(op.id), .integer(op.sequence)])
            if try !hasPending(op.collection, op.id) {
                try store(op.collection, op.id, server)
            } else if var local = try document(op.collection, op.id) {
                for key in ["_updatedAt", "_createdAt", "_acl"] { local[key] = server[key] }
                try store(op.collection, op.id, local)
            }
        }
    }

    /// A document as a write sends it: no server timestamps, the given id.
    static func writable(_ document: JSONValue, id: String) -> JSONValue {
        var d = document
        d["_createdAt"] = nil
        d["_updatedAt"] = nil
        d["_id"] = .string(id)
        return d
    }

    func store(_ collection: String, _ id: String, _ body: JSONValue) throws {
        try db.execute("INSERT OR REPLACE INTO entities (collection, id, body) VALUES (?, ?, ?)",
                       [.text(collection), .text(id), .blob(try body.jsonData())])
        try index(collection, id, body)
        changed(collection)
    }

    func remove(_ collection: String, _ id: String) throws {
        try db.execute("DELETE FROM entities WHERE collection = ? AND id = ?", [.text(collection), .text(id)])
        try index(collection, id, nil)
        changed(collection)
    }

    func storeOrRemove(_ collection: String, _ id: String, _ body: JSONValue?) throws {
        if let body { try store(collection, id, body) } else { try remove(collection, id) }
    }
}

/// A document's place in the store.
struct DocumentKey: Hashable {
    let collection: String
    let id: String
}

extension RoostError {
    /// Errors that end a whole sync (no network, a session that ended, a busy
    /// server), as opposed to one mirror's refusal.
    var stopsSync: Bool {
        switch self {
        case .unreachable, .network, .cancelled, .notSignedIn, .localStore: return true
        case .server(let e): return e.status == 401 || e.status == 429 || e.code == .overloaded || e.code == .shuttingDown
        case .invalidResponse, .twoFactorRequired: return false
        }
    }
}
