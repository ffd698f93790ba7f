/// The mail outbox.
public protocol MailWriting: AnyObject {
    func enqueueMail(recipient: String, kind: String, message: String, nowMilliseconds: Int64) throws
    func claimMail(nowMilliseconds: Int64, leaseMilliseconds: Int64, limit: Int) throws -> [MailJob]
    func recordMail(rid: Int64, attempt: Int, error: String?, outcome: MailOutcome) throws
    func mailCounts() throws -> (pending: Int, dead: Int)
}
