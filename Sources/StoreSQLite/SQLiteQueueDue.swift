import Store

/// `QueueDueReading` on SQLite: when the mail outbox and the account jobs next have work.
extension DocumentReader {
    public func nextMailDue() throws -> Int64? {
        try db.prepare("SELECT min(next_attempt_at) FROM _mail_outbox WHERE status = 'pending'").firstRow { $0.isNull(0) ? nil : $0.int(0) } ?? nil
    }

    public func nextAccountJobDue() throws -> Int64? {
        try db.prepare("SELECT min(due_at) FROM _account_jobs").firstRow { $0.isNull(0) ? nil : $0.int(0) } ?? nil
    }
}
