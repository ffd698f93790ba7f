import Store

extension DocumentWriter {
    public func prepareScheduledRuns() throws { try db.exec(ScheduledRuns.tableSQL) }

    public func claimScheduledRun(job: String, fire: Int64, previous: Int64, node: String, now: Int64, leaseUntil: Int64) throws -> Bool {
        try db.prepare(ScheduledRuns.insertSQL).run([.text(job), .int(previous)])
        return try db.prepare(ScheduledRuns.claimSQL).firstRow([.text(job), .text(node), .int(leaseUntil), .int(fire), .int(now)]) { _ in true } ?? false
    }

    public func finishScheduledRun(job: String, node: String) throws {
        try db.prepare(ScheduledRuns.finishSQL).run([.text(job), .text(node)])
    }
}
