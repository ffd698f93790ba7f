/// When the account mail outbox and the account jobs next have work, read
/// on a reader: an idle queue costs its sender a read each second, never a
/// writer job (the writer claims only what is due).
public protocol QueueDueReading: AnyObject {
    /// When the next pending message is due (ms), if any.
    func nextMailDue() throws -> Int64?
    /// When the next account job is due (ms), if any.
    func nextAccountJobDue() throws -> Int64?
}
