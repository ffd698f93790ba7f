import CSodium

/// Argon2id password hashing through libsodium's `crypto_pwhash_str`.
///
/// Hashing is slow and memory-hungry on purpose: call it from the hash
/// worker pool only, never from an event loop.
public struct PasswordHasher: Sendable {
    /// libsodium's named cost levels.
    public enum Cost: String, Sendable, CaseIterable {
        case interactive, moderate, sensitive
    }

    public let cost: Cost
    let opsLimit: UInt64
    let memLimit: Int

    public init(cost: Cost) {
        precondition(Sodium.ready, "libsodium failed to initialise")
        self.cost = cost
        switch cost {
        case .interactive: (opsLimit, memLimit) = (UInt64(crypto_pwhash_opslimit_interactive()), crypto_pwhash_memlimit_interactive())
        case .moderate: (opsLimit, memLimit) = (UInt64(crypto_pwhash_opslimit_moderate()), crypto_pwhash_memlimit_moderate())
        case .sensitive: (opsLimit, memLimit) = (UInt64(crypto_pwhash_opslimit_sensitive()), crypto_pwhash_memlimit_sensitive())
        }
    }

    /// A self-describing `$argon2id$…` string, or nil if memory ran out.
    public func hash(_ password: String) -> String? {
        var out = [CChar](repeating: 0, count: Int(crypto_pwhash_strbytes()))
        let bytes = Array(password.utf8).map { CChar(bitPattern: $0) } + [0]
        let rc = crypto_pwhash_str_alg(&out, bytes, UInt64(bytes.count - 1), opsLimit, memLimit, crypto_pwhash_alg_argon2id13())
        guard rc == 0 else { return nil }
        return String(cString: out)
    }

    /// True when `password` matches `hash`, in constant time.
    public func verify(_ password: String, against hash: String) -> Bool {
        let bytes = Array(password.utf8).map { CChar(bitPattern: $0) } + [0]
        return crypto_pwhash_str_verify(hash, bytes, UInt64(bytes.count - 1)) == 0
    }

    /// A hash of a random password, verified against when a username does not
    /// exist, so a failed log-in takes the same time either way.
    public func decoyHash() -> String { hash(SessionToken.generate().token) ?? "" }
}
