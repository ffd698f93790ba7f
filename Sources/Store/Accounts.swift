import JSON

/// A session found by its token hash.
public struct SessionRecord: Sendable {
    public let userID: String
    public let expiresAt: Int64
    public let lastSeen: Int64
    /// The user's roles, sorted, read in the same query as the session, so
    /// a membership change holds from the very next request on every node.
    public let roles: [String]

    public init(userID: String, expiresAt: Int64, lastSeen: Int64, roles: [String] = []) {
        self.userID = userID
        self.expiresAt = expiresAt
        self.lastSeen = lastSeen
        self.roles = roles
    }
}

extension StoreError {
    /// A sign-up's username is taken (ignoring case): the one answer for it,
    /// whether a reader saw the name before hashing or the writer's unique index did.
    public static let usernameTaken = StoreError.conflict("That username is taken.")
    /// A sign-up's or an email change's address belongs to another account.
    public static let emailTaken = StoreError.conflict(emailTakenMessage)
    static let emailTakenMessage = "That email address is taken."

    public var isEmailTaken: Bool {
        if case .conflict(let message) = self { return message == Self.emailTakenMessage }
        return false
    }
}

/// A user's stored credentials.
public struct CredentialRecord: Sendable {
    public let userID: String
    public let username: String
    public let passwordHash: String
    /// The account's email address, normalised (`EmailAddress`), if it has one.
    public let email: String?
    public let emailVerified: Bool
    /// Unix seconds since the account is anonymous (a guest), nil once it has credentials.
    public let anonymousSince: Int64?
    /// Two-factor: the TOTP secret (base32; set up, maybe not yet on), whether it is on,
    /// the last step a code was used for, and the recovery codes' hashes.
    public var totpSecret: String? = nil
    public var totpEnabled = false
    public var totpLastStep: Int64 = 0
    public var totpRecovery: [String] = []

    public init(userID: String, username: String, passwordHash: String, email: String? = nil, emailVerified: Bool = false,
                anonymousSince: Int64? = nil) {
        self.userID = userID
        self.username = username
        self.passwordHash = passwordHash
        self.email = email
        self.emailVerified = emailVerified
        self.anonymousSince = anonymousSince
    }
}

extension CredentialRecord {
    /// The recovery hashes of their stored JSON array.
    public static func recoveryList(_ text: String) -> [String] {
        (try? JSONParser.parse(text))?.arrayValue?.compactMap { if case .string(let s) = $0 { s } else { nil } } ?? []
    }

    public static func recoveryText(_ hashes: [String]) -> String {
        "[" + hashes.map(JSONWriter.quoted).joined(separator: ",") + "]"
    }
}
