import Daemon
import Foundation
import EventLoop
import HTTP
import JSON
import Logging
import Store

/// The admin API behind the console (admin token only; any other token is
/// 403, none or a wrong one 401):
///
/// - `GET /admin/stats[?after=<ms>]`: the last five minutes of one-second samples;
/// - `GET /admin/logs?after=<seq>&level=&request_id=&polling=`: recent log entries
///   (without the console's own polling unless `polling=true`: `ConsolePolling`);
/// - (`/admin/collections` is `CollectionAdminHandlers`'s);
/// - `GET /admin/files?limit=&skip=`: file metadata, newest first, with the total;
/// - `GET|DELETE /admin/users/:id/sessions`, `DELETE /admin/users/:id/sessions/:sid`.
struct ConsoleAdminHandlers: Sendable {
    let jobs: CallerJobs
    let stats: ConsoleStats
    let logs: LogRing

    var routes: [RoostRoute] {
        let handlers = self
        return [
            RoostRoute("/admin/stats", [.get: { r, out in handlers.statSamples(r, out) }]),
            RoostRoute("/admin/logs", [.get: { r, out in handlers.logEntries(r, out) }]),
            RoostRoute("/admin/files", [.get: { r, out in handlers.filePage(r, out) }]),
            RoostRoute("/admin/users/:id/sessions", [.get: { r, out in handlers.sessions(r.parameter("id"), r, out) },
                                                     .delete: { r, out in handlers.revoke(r.parameter("id"), nil, r, out) }]),
            RoostRoute("/admin/users/:id/sessions/:sid", [.delete: { r, out in handlers.revoke(r.parameter("id"), r.parameter("sid"), r, out) }]),
        ]
    }

    func statSamples(_ request: Request, _ out: ResponseWriter) {
        let after = Int64(request.query["after"] ?? "") ?? 0
        let stats = self.stats
        asAdmin(request, out) { _ in .json(200, stats.json(after: after)) }
    }

    func filePage(_ request: Request, _ out: ResponseWriter) {
        let limit = min(max(Int(request.query["limit"] ?? "") ?? 24, 1), 200)
        let skip = max(Int(request.query["skip"] ?? "") ?? 0, 0)
        asAdmin(request, out) { reader in
            let page = try reader.filePage(limit: limit, skip: skip)
            return .json(200, "{\"total\":\(page.total),\"files\":[" + page.documents.joined(separator: ",") + "]}")
        }
    }

    func sessions(_ user: String, _ request: Request, _ out: ResponseWriter) {
        asAdmin(request, out) { reader in
            .json(200, JSONValue.array(try reader.sessions(userID: user, now: Authenticator.now).map { session in
                var o = JSONObject()
                o["id"] = .string(session.id)
                o["createdAt"] = .string(Self.iso(session.createdAt * 1000))
                o["lastSeen"] = .string(Self.iso(session.lastSeen * 1000))
                o["expiresAt"] = .string(Self.iso(session.expiresAt * 1000))
                return .object(o)
            }).jsonText)
        }
    }

    /// Revokes one session (`id`) of `user`, or all of them; once committed,
    /// the live streams of revoked sessions end now, not at the next heartbeat.
    func revoke(_ user: String, _ id: String?, _ request: Request, _ out: ResponseWriter) {
        let pools = jobs.pools
        jobs.writeAsAdmin(request, out, committed: { pools.sessionsEnded() }) { writer in
            let n = try writer.revokeSessions(userID: user, id: id)
            if id != nil && n == 0 { throw HTTPError.notFound("No session \(id ?? "") of user \(user).") }
            return .json(200, "{\"count\":\(n)}")
        }
    }

    /// `GET /admin/logs`: entries after `after`, at `level` or above, of one
    /// `request_id` when given; `last` is the `after` of the next poll.
    func logEntries(_ request: Request, _ out: ResponseWriter) {
        let (afterText, limitText) = (request.query["after"], request.query["limit"])
        let levelName = request.query["level"].flatMap { $0.isEmpty ? nil : $0 }
        let requestID = request.query["request_id"]
        let pollingText = request.query["polling"]
        let logs = self.logs
        asAdmin(request, out) { _ in  // the admin first, then what they ask
            guard let after = afterText.map({ UInt64($0) }) ?? 0 else {
                throw HTTPError(.invalidQuery, "after must be the last of an earlier answer (a whole number, 0 or more).")
            }
            guard let limit = limitText.map({ Int($0) }) ?? 500, (1...2000).contains(limit) else {
                throw HTTPError(.invalidQuery, "limit must be a whole number from 1 to 2000.")
            }
            guard let level = levelName.map({ Logger.Level(rawValue: $0) }) ?? .trace else {
                throw HTTPError(.invalidQuery, "level must be trace, debug, info, notice, warning, error or critical.")
            }
            guard pollingText == nil || pollingText == "true" || pollingText == "false" else {
                throw HTTPError(.invalidQuery, "polling must be true or false.")
            }
            let polling = pollingText == "true"
            let (records, last) = logs.entries(after: after, minimum: level, requestID: requestID,
                                                hiding: ConsolePolling.hiding(unless: polling), limit: limit)
            var o = JSONObject()
            o["last"] = .int(Int64(last))
            o["entries"] = .array(records.map { r in
                var e = JSONObject()
                e["seq"] = .int(Int64(r.seq))
                e["time"] = .string(Self.iso(r.time))
                e["level"] = .string(r.level.rawValue)
                e["label"] = .string(r.label)
                e["message"] = .string(r.message)
                e["requestId"] = r.requestID.map { .string($0) } ?? .null
                e["fields"] = .object(JSONObject(r.fields.map { (key: $0.0, value: JSONValue.string($0.1)) }))
                return .object(e)
            })
            return .json(200, o.jsonText)
        }
    }

    static func iso(_ milliseconds: Int64) -> String {
        Timestamp.format(Date(timeIntervalSince1970: Double(milliseconds) / 1000))
    }

    func asAdmin(_ request: Request, _ out: ResponseWriter, _ body: @escaping @Sendable (any DocumentReading) throws -> Response) {
        jobs.readAsAdmin(request, out) { try body($0) }
    }

    func asAdminWriting(_ request: Request, _ out: ResponseWriter, _ body: @escaping @Sendable (any DocumentWriting) throws -> Response) {
        jobs.writeAsAdmin(request, out, body)
    }
}
