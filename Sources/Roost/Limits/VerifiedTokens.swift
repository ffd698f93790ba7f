import Foundation

/// Tokens a reader or the writer has lately found to be a live session (or
/// the admin token), so the event loop can charge a signed-in caller's
/// budget to its account without touching the sessions table.
///
/// A token is remembered only after it verified, so a made-up token is never
/// found here and its request is charged to its client address: rotating
/// invalid tokens gains nothing. An entry lives `ttl` seconds after its last
/// verification (a signed-out token may be charged to its own account that
/// long; its request is still refused by the session look-up). Entries are
/// keyed by a per-process seeded 64-bit hash of the token (the token itself
/// is not kept), in `stripes` bounded tables.
final class VerifiedTokens: @unchecked Sendable {
    enum Identity: Sendable, Equatable {
        case user(String)
        case admin
    }

    private struct Entry {
        let identity: Identity
        let expires: UInt64
    }

    private final class Stripe: @unchecked Sendable {
        let lock = NSLock()
        var entries: [Int: Entry] = [:]
    }

    static let ttl: UInt64 = 300 * 1_000_000_000
    private static let stripeCount = 16
    private let stripes = (0..<VerifiedTokens.stripeCount).map { _ in Stripe() }
    private let capacity: Int

    init(capacity: Int) { self.capacity = max(16, capacity / Self.stripeCount) }

    /// The identity `token` verified as, if it did lately.
    func identity(of token: String, now: UInt64 = RateLimiter.now()) -> Identity? {
        let key = token.hashValue
        let stripe = self.stripe(key)
        stripe.lock.lock()
        defer { stripe.lock.unlock() }
        guard let entry = stripe.entries[key], entry.expires > now else { return nil }
        return entry.identity
    }

    /// Remembers that `token` verified as `identity` (after a session look-up
    /// or when a session is made). Cheap when it is already fresh.
    func remember(_ token: String, as identity: Identity, now: UInt64 = RateLimiter.now()) {
        let key = token.hashValue
        let stripe = self.stripe(key)
        stripe.lock.lock()
        defer { stripe.lock.unlock() }
        // Refreshed once half its life is gone, so a busy caller writes rarely.
        if let entry = stripe.entries[key], entry.identity == identity, entry.expires > now + Self.ttl / 2 { return }
        if stripe.entries[key] == nil && stripe.entries.count >= capacity {
            stripe.entries = stripe.entries.filter { $0.value.expires > now }
            if stripe.entries.count >= capacity * 3 / 4 {
                for k in Array(stripe.entries.keys.prefix(stripe.entries.count - capacity / 2)) { stripe.entries.removeValue(forKey: k) }
            }
        }
        stripe.entries[key] = Entry(identity: identity, expires: now + Self.ttl)
    }

    /// Forgets `token` (its session ended here).
    func forget(_ token: String) {
        let key = token.hashValue
        let stripe = self.stripe(key)
        stripe.lock.lock()
        stripe.entries.removeValue(forKey: key)
        stripe.lock.unlock()
    }

    private func stripe(_ key: Int) -> Stripe { stripes[Int(UInt(bitPattern: key) % UInt(Self.stripeCount))] }
}
