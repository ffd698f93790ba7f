import Store

/// `QueueDueReading` on PostgreSQL: when the mail outbox and the account jobs next have work.
extension PostgresDocumentReader {
    public func nextMailDue() throws -> Int64? {
        try db.first("SELECT min(next_attempt_at) FROM _mail_outbox WHERE status = 'pending'") { $0.int(0) } ?? nil
    }

    public func nextAccountJobDue() throws -> Int64? {
        try db.first("SELECT min(due_at) FROM _account_jobs") { $0.int(0) } ?? nil
    }
}
