/// Accounts as readers see them.
public protocol AccountsReading: SessionLookup {
    func credentials(username: String) throws -> CredentialRecord?
    func credentials(userID: String) throws -> CredentialRecord?
    func sessions(userID: String, now: Int64) throws -> [SessionSummary]
    func identities(userID: String) throws -> [IdentityRecord]
    func credentials(email: String) throws -> CredentialRecord?
}
