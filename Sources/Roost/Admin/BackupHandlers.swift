import Backup
import EventLoop
import HTTP
import JSON
import Store

/// `/admin/backups` (admin token only):
///
/// - `GET`: every backup in `backups.dir`, oldest first, with its state
///   (`verified`, `incomplete`, `invalid`), time, size and file count, and
///   whether one is running, and `unavailable`: why a backup cannot be
///   taken here (no `backups.dir`, data in PostgreSQL), or null;
/// - `POST`: take one now. 202 at once, or with `?wait=true` 201 and the
///   backup once it is verified (500 with the reason if it failed);
///   409 when one is running or `backups.dir` is unset.
///
/// The admin check runs on a reader (a session look-up); the backup on the
/// backup thread; reading the directory on a reader, never on the loop.
struct BackupHandlers: Sendable {
    let service: BackupService
    let jobs: CallerJobs

    var routes: [RoostRoute] {
        let handlers = self
        return [RoostRoute("/admin/backups", [.get: { r, out in handlers.list(r, out) }, .post: { r, out in handlers.take(r, out) }])]
    }

    /// Runs `body` on a reader once the caller is the admin; it returns the
    /// response, or nil when the backup thread will answer.
    private func asAdmin(_ request: Request, _ out: ResponseWriter, _ body: @escaping @Sendable () throws -> Response?) {
        jobs.readAsAdmin(request, out) { _ in try body() }
    }

    func list(_ request: Request, _ out: ResponseWriter) {
        let service = self.service
        asAdmin(request, out) {
            var o = JSONObject()
            o["dir"] = service.settings.dir.map { .string($0) } ?? .null
            o["every"] = service.settings.every.map { .int(Int64($0)) } ?? .null
            o["keep"] = .int(Int64(service.settings.keep))
            o["running"] = .bool(service.isRunning)
            // Why `POST` would be refused whatever the moment (the console says so instead of a button); null when it can run.
            o["embeddedDatabase"] = .bool(service.embeddedDatabase) // false: the data live in PostgreSQL
            o["unavailable"] = !service.embeddedDatabase ? .string(RoostConfig.externalDatabaseBackups)
                : service.settings.dir == nil ? .string(Self.notConfigured) : .null
            o["backups"] = .array((service.catalog?.list() ?? []).map { .object(Self.describe($0)) })
            return .json(200, JSONValue.object(o).jsonText)
        }
    }

    func take(_ request: Request, _ out: ResponseWriter) {
        let service = self.service
        let wait = ["true", "1"].contains(request.query["wait"] ?? "")
        let completion: BackupService.Completion? = wait ? { @Sendable result in out.send(Self.answer(result)) } : nil
        asAdmin(request, out) {
            do {
                try service.requestNow(completion)
            } catch BackupService.Refusal.notConfigured {
                throw HTTPError(.backupsNotConfigured, Self.notConfigured)
            } catch BackupService.Refusal.externalDatabase {
                throw HTTPError(.backupsNotForThisDatabase, RoostConfig.externalDatabaseBackups)
            } catch BackupService.Refusal.running {
                throw HTTPError(.backupRunning, "A backup is already running; GET /admin/backups shows when it is done.")
            }
            return wait ? nil : Response.json(202, "{\"state\":\"running\"}")
        }
    }

    static let notConfigured = "Set backups.dir in the configuration to take backups from the daemon."

    /// The answer to `POST /admin/backups?wait=true`.
    static func answer(_ result: Result<BackupTaker.Outcome, any Error>) -> Response {
        switch result {
        case .success(let o): return .json(201, JSONValue.object(describe(o)).jsonText)
        case .failure(let e): return HTTPError(.backupFailed, "The backup failed: \(e)").response
        }
    }

    static func describe(_ l: BackupCatalog.Listing) -> JSONObject {
        var o = JSONObject()
        o["name"] = .string(l.name)
        o["state"] = .string(l.state)
        o["verified"] = .bool(l.state == "verified")
        o["createdAt"] = l.createdAt.map { .string($0) } ?? .null
        o["seconds"] = l.seconds.map { .double($0) } ?? .null
        o["bytes"] = .int(Int64(l.bytes))
        o["files"] = .int(Int64(l.files))
        if let p = l.problem { o["problem"] = .string(p) }
        return o
    }

    static func describe(_ o: BackupTaker.Outcome) -> JSONObject {
        var j = JSONObject()
        j["name"] = .string(o.name)
        j["state"] = .string("verified")
        j["verified"] = .bool(true)
        j["createdAt"] = .string(o.manifest.createdAt)
        j["seconds"] = .double(o.seconds)
        j["bytes"] = .int(Int64(o.manifest.totalBytes))
        j["files"] = .int(Int64(o.manifest.files.count))
        j["linkedFiles"] = .int(Int64(o.linkedFiles))
        j["linkedLiveFiles"] = .int(Int64(o.linkedLiveFiles))
        j["copiedFiles"] = .int(Int64(o.copiedFiles))
        j["copiedBytes"] = .int(Int64(o.copiedBytes))
        return j
    }
}
