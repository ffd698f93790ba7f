import CSodium

/// One-time codes for typing into an app: `digits` decimal digits, each
/// uniformly random (libsodium's `randombytes_uniform`, no modulo bias).
public enum OneTimeCode {
    public static func generate(digits: Int = 6) -> String {
        precondition(Sodium.ready)
        return String((0..<digits).map { _ in Character(String(randombytes_uniform(10))) })
    }

    /// The stored form of a code: BLAKE2b of the code bound to what it is for,
    /// so a code hash of one account or purpose never matches another's.
    public static func hash(_ code: String, userID: String, purpose: String) -> String {
        SessionToken.hash("\(purpose)|\(userID)|\(code)")
    }
}
