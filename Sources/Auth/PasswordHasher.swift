import CSodium

/// Argon2id password hashing through libsodium's `crypto_pwhash_str_alg`.
///
/// Hashing is slow and memory-hungry on purpose: call it from the hash
/// worker pool only, never from an event loop. Each hash holds `memLimit`
/// bytes while it runs, so the pool's memory budget is `memLimit` × its threads.
public struct PasswordHasher: Sendable {
    /// libsodium's named cost levels, and OWASP's Argon2id minimum.
    public enum Cost: String, Sendable, CaseIterable {
        /// OWASP's minimum: 19 MiB, 2 passes (a third of `interactive`'s memory).
        case owasp
        /// libsodium's interactive level: 64 MiB, 2 passes.
        case interactive
        /// 256 MiB, 3 passes.
        case moderate
        /// 1 GiB, 4 passes.
        case sensitive
    }

    public let cost: Cost
    let opsLimit: UInt64
    /// Bytes one hash holds while it runs.
    public let memLimit: Int

    public init(cost: Cost) {
        precondition(Sodium.ready, "libsodium failed to initialise")
        self.cost = cost
        switch cost {
        case .owasp: (opsLimit, memLimit) = (2, 19 << 20)
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

    /// True when `password` matches `hash`, in constant time. The cost is
    /// read from `hash`, so hashes made under another cost still verify.
    public func verify(_ password: String, against hash: String) -> Bool {
        let bytes = Array(password.utf8).map { CChar(bitPattern: $0) } + [0]
        return crypto_pwhash_str_verify(hash, bytes, UInt64(bytes.count - 1)) == 0
    }

    /// A hash string to verify against when a username does not exist, so a
    /// failed log-in takes the same time either way. It has this cost's
    /// parameters and a random salt and digest, so verifying it costs what a
    /// real hash costs and no password matches it; making it costs nothing
    /// (hashing a random password at start-up took `memLimit` for nothing).
    public func decoyHash() -> String {
        func base64(_ count: Int) -> String {
            var raw = [UInt8](repeating: 0, count: count)
            randombytes_buf(&raw, count)
            let variant = Int32(sodium_base64_VARIANT_ORIGINAL_NO_PADDING)
            var text = [CChar](repeating: 0, count: sodium_base64_encoded_len(count, variant))
            _ = sodium_bin2base64(&text, text.count, raw, count, variant)
            return String(cString: text)
        }
        let salt = base64(Int(crypto_pwhash_saltbytes())), digest = base64(32)
        return "$argon2id$v=19$m=\(memLimit >> 10),t=\(opsLimit),p=1$\(salt)$\(digest)"
    }
}
