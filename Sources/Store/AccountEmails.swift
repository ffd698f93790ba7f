/// A one-time code of an account (email verification, password reset,
/// email change): a 6-digit code and a link token, both stored hashed. One
/// per account and purpose, so a later one replaces (invalidates) an earlier.
public struct AccountCode: Sendable, Equatable {
    public let userID: String
    public let purpose: String
    /// The address the code was sent to (for an email change: the new one).
    public let email: String
    public let codeHash: String
    public let linkHash: String
    /// Unix seconds.
    public let expiresAt: Int64
    /// Wrong codes tried against it.
    public let attempts: Int64

    public init(userID: String, purpose: String, email: String, codeHash: String, linkHash: String, expiresAt: Int64, attempts: Int64 = 0) {
        self.userID = userID
        self.purpose = purpose
        self.email = email
        self.codeHash = codeHash
        self.linkHash = linkHash
        self.expiresAt = expiresAt
        self.attempts = attempts
    }
}

/// An account's sign-in identity at a provider (Sign in with Apple, Google, an OIDC issuer).
public struct IdentityRecord: Sendable, Equatable {
    public let provider: String
    public let subject: String
    public let email: String?
    public let createdAt: Int64

    public init(provider: String, subject: String, email: String?, createdAt: Int64) {
        self.provider = provider
        self.subject = subject
        self.email = email
        self.createdAt = createdAt
    }
}

/// One message of the mail outbox, claimed for sending.
public struct MailJob: Sendable {
    public let rid: Int64
    public let recipient: String
    public let kind: String
    /// The whole RFC 5322 message (headers and body, CRLF line ends).
    public let message: String
    public let attempts: Int

    public init(rid: Int64, recipient: String, kind: String, message: String, attempts: Int) {
        self.rid = rid
        self.recipient = recipient
        self.kind = kind
        self.message = message
        self.attempts = attempts
    }
}

/// What one SMTP attempt decided for a queued message.
public enum MailOutcome: Sendable {
    /// Accepted by the server: the row (and the code in it) is removed.
    case sent
    /// Try again at this time (milliseconds since the epoch).
    case retry(atMilliseconds: Int64)
    /// The last attempt failed: kept as `dead`, its text cleared.
    case dead
}
