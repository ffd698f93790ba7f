import Foundation
import Store

/// Scheduled jobs' runs on PostgreSQL (`ScheduledRuns`): nodes claiming the
/// same period at once serialize on the row; the second UPDATE re-reads it
/// (READ COMMITTED), finds the live lease and claims nothing.
extension PostgresDocumentWriter {
    /// Creates the table once, under the migrations' advisory lock (nodes may start together).
    public func prepareScheduledRuns() throws {
        try db.transaction {
            try db.run("SELECT pg_advisory_xact_lock($1::bigint)", [.int(PostgresMigrations.lockKey)])
            try db.run(ScheduledRuns.tableSQL)
        }
    }

    public func claimScheduledRun(job: String, fire: Int64, previous: Int64, node: String, now: Int64, leaseUntil: Int64) throws -> Bool {
        try settleHeldWrite()
        try db.run(Self.numbered(ScheduledRuns.insertSQL, casts: ["text", "bigint"]), [.text(job), .int(previous)])
        let claimed: Bool? = try db.first(Self.numbered(ScheduledRuns.claimSQL, casts: ["text", "text", "bigint", "bigint", "bigint"]),
                                           [.text(job), .text(node), .int(leaseUntil), .int(fire), .int(now)]) { _ in true }
        return claimed ?? false
    }

    public func finishScheduledRun(job: String, node: String) throws {
        try db.run(Self.numbered(ScheduledRuns.finishSQL, casts: ["text", "text"]), [.text(job), .text(node)])
    }

    /// `?n` placeholders as PostgreSQL's `$n::type`.
    static func numbered(_ sql: String, casts: [String]) -> String {
        var out = sql
        for (i, cast) in casts.enumerated().reversed() { out = out.replacingOccurrences(of: "?\(i + 1)", with: "$\(i + 1)::\(cast)") }
        return out
    }
}
