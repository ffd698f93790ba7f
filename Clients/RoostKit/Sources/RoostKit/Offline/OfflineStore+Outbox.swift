import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension OfflineStore {
    /// Sends the outbox, then pulls every mirror's changes.
    ///
    /// Queued writes go in order; each is removed only once the server has
    /// answered it, so a write interrupted by a crash or a dropped connection
    /// is sent again. Without a network this throws ``RoostError/unreachable(_:)``
    /// and leaves everything queued. Concurrent calls share one run.
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
        for mirror in mirrors.values.sorted(by: { $0.name < $1.name }) { try await pull(mirror, &report) }
        report.pending = try db.query("SELECT count(*) FROM outbox").first?[0].integer.map(Int.init) ?? 0
        return report
    }

    /// Sends queued writes in order until the outbox is empty.
    func pushOutbox(_ report: inout SyncReport) async throws {
        while let op = try db.query("SELECT seq, collection, id, op, body, if_match FROM outbox ORDER BY seq LIMIT 1").first.map(Self.pending) {
            try db.execute("UPDATE outbox SET attempts = attempts + 1 WHERE seq = ?", [.integer(op.sequence)])
            let reply = try await client.raw(request(for: op))
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
                } else {
                    try await conflict(op, reason: "Conflict", &report)
                }
            case (412, _), (404, _):
                try await conflict(op, reason: reply.status == 412 ? "PreconditionFailed" : "NotFound", &report)
            case (401, _), (408, _), (429, _), (500..., _):
                try db.execute("UPDATE outbox SET last_error = ? WHERE seq = ?", [.text("HTTP \(reply.status)"), .integer(op.sequence)])
                throw RoostError.server(ServerError(response: reply.response, body: reply.data))
            default:
                // Refused for good (invalid, forbidden, too large): the server's copy stands.
                let code = ServerError(response: reply.response, body: reply.data).code.rawValue
                try record(op, server: try await fetch(op.collection, op.id), reason: code)
                report.conflicts += 1
            }
        }
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

    /// A write the server accepted: drop it, move later writes of the same
    /// document onto the new version, and take the server's copy when nothing
    /// else is queued for it.
    private func finish(_ op: PendingWrite, server: JSONValue?) throws {
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

    /// A write the server refused because the document changed: ask the resolver.
    private func conflict(_ op: PendingWrite, reason: String, _ report: inout SyncReport) async throws {
        report.conflicts += 1
        let server = try await fetch(op.collection, op.id)
        let local = try document(op.collection, op.id)
        let attempts = try db.query("SELECT attempts FROM outbox WHERE seq = ?", [.integer(op.sequence)]).first?[0].integer ?? 0
        let resolution = attempts > 3 ? .keepServer
            : await resolver(Conflict(collection: op.collection, id: op.id, operation: op.operation, local: local, server: server))
        let wanted: JSONValue?
        switch resolution {
        case .keepServer: return try record(op, server: server, reason: reason)
        case .keepLocal: wanted = local
        case .merge(let merged): wanted = merged
        }
        // Rewrite this write in place as the whole wanted state, against the server's version.
        let etag = server?["_updatedAt"]?.stringValue.map { "\"\($0)\"" }
        let (kind, body): (PendingWrite.Operation, JSONValue?) = switch (wanted, server) {
        case (nil, _): (.delete, nil)
        case (let w?, nil): (.create, Self.writable(w, id: op.id))
        case (let w?, _?): (.replace, Self.writable(w, id: op.id))
        }
        try db.transaction {
            try db.execute("DELETE FROM outbox WHERE collection = ? AND id = ? AND seq > ?",
                           [.text(op.collection), .text(op.id), .integer(op.sequence)])
            if kind == .delete, server == nil {
                try db.execute("DELETE FROM outbox WHERE seq = ?", [.integer(op.sequence)])
                return
            }
            try db.execute("UPDATE outbox SET op = ?, body = ?, if_match = ? WHERE seq = ?",
                           [.text(kind.rawValue), try body.map { .blob(try $0.jsonData()) } ?? .null,
                            SQLiteValue(kind == .create ? nil : etag), .integer(op.sequence)])
            if let wanted { try store(op.collection, op.id, wanted) }
        }
    }

    /// Keeps the server's copy and records the local one in `conflicts`; every
    /// queued write of that document is dropped (they built on the lost change).
    private func record(_ op: PendingWrite, server: JSONValue?, reason: String) throws {
        try db.transaction {
            let local = try document(op.collection, op.id)
            try db.execute("INSERT INTO conflicts (collection, id, op, local, server, reason, at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                           [.text(op.collection), .text(op.id), .text(op.operation.rawValue),
                            try local.map { .blob(try $0.jsonData()) } ?? .null,
                            try server.map { .blob(try $0.jsonData()) } ?? .null, .text(reason), .text(RoostDate.format(Date()))])
            try db.execute("DELETE FROM outbox WHERE collection = ? AND id = ?", [.text(op.collection), .text(op.id)])
            if let server { try store(op.collection, op.id, server) } else { try remove(op.collection, op.id) }
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
    }

    func remove(_ collection: String, _ id: String) throws {
        try db.execute("DELETE FROM entities WHERE collection = ? AND id = ?", [.text(collection), .text(id)])
    }
}
