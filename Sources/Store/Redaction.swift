/// Top-level fields removed from every row except the caller's own, such as
/// a user's email in the member directory.
public struct Redaction: Sendable {
    public let fields: [String]
    /// The row id that keeps every field (the caller's own record), if any.
    public let exceptID: String?

    public init(fields: [String], exceptID: String?) {
        self.fields = fields
        self.exceptID = exceptID
    }
}
