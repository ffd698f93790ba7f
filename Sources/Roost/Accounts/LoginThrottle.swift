import Auth
import HTTP
import Store

/// The log-in throttle: which counters an attempt touches and what they allow.
///
/// An address is an IPv4 address or an IPv6 /64 (one subscriber's network),
/// as `trusted_proxies` resolves it. A *known* address of an account is one
/// it has logged in (or signed up) from in the last 90 days.
///
/// - `pair:<username>|<address>`: 5 wrong passwords for one username from one
///   address block that pair (2 s, doubling to 15 min). Nothing else.
/// - `address:<address>`: 50 wrong log-ins from one address, for any usernames,
///   block that address, except for accounts it is known to.
/// - `account:<username>`: past 20 wrong passwords for an existing account from
///   addresses it does not know, log-ins to it from such addresses are slowed to
///   one per 15 s. Its known addresses never wait. Unknown usernames have none.
///
/// Every attempt is counted in one writer job before its password is hashed,
/// so parallel attempts never check more passwords than allowed; a right
/// password gives its counts back.
///
/// A signed-in user's password check (`oldPassword` on a password change)
/// is an attempt too, on the same counters under the account's username: a
/// stolen session token buys no more guesses than the log-in form does.
enum LoginThrottle {
    static let window: Int64 = 15 * 60
    static let pairRule = LoginRule(.block(allowed: 5, maxBlock: 15 * 60), window: window)
    static let addressRule = LoginRule(.block(allowed: 50, maxBlock: 15 * 60), window: window)
    static let accountRule = LoginRule(.slow(free: 20, interval: 15), window: window)
    /// How long a successful log-in keeps an address known to its account.
    static let knownFor: Int64 = 90 * 24 * 3600

    /// The counters one attempt was charged to, and what the writer found.
    struct Reservation: Sendable {
        let keys: [(key: String, rule: LoginRule)]
        let stored: CredentialRecord?
        let address: String
    }

    enum Decision: Sendable {
        case refused(wait: Int64)
        case granted(Reservation)
    }

    /// The throttle's name for a client address: IPv4 as is, IPv6 by its /64.
    static func addressKey(_ remote: String) -> String {
        guard let ip = IPAddress(remote) else { return remote }
        return ip.isIPv4 ? ip.description : ip.masked(bits: 64).description + "/64"
    }

    /// The answer to a refused attempt, log-in or password check alike.
    static func refusal(wait: Int64) -> HTTPError {
        HTTPError(.tooManyAttempts, "Too many failed log-ins; wait before trying again.",
                  headers: Headers([("Retry-After", "\(wait)")]))
    }

    /// Checks every counter a log-in attempt touches and, if none refuses,
    /// counts it on all of them. On the writer: atomic with every other attempt.
    static func reserve(_ writer: any AccountsWriting & LoginThrottleWriting, username: String, remote: String, now: Int64) throws -> Decision {
        try reserve(writer, login: .username(username), remote: remote, now: now)
    }

    /// What a log-in names its account by.
    enum LoginName: Sendable {
        case username(String)
        /// Normalised (`EmailAddress`).
        case email(String)
    }

    /// Checks and counts a log-in by username or by email. The pair counter
    /// is kept per name as given (a username's and an email's never tell
    /// they are one account); the account counter per account.
    /// Placeholder usernames (`~…`, accounts signed up by email alone) are
    /// never found by name.
    static func reserve(_ writer: any AccountsWriting & LoginThrottleWriting, login: LoginName, remote: String, now: Int64) throws -> Decision {
        switch login {
        case .username(let name):
            let stored = name.hasPrefix("~") ? nil : try writer.credentials(username: name)
            return try reserve(writer, name: name, stored: stored, remote: remote, now: now)
        case .email(let email):
            return try reserve(writer, name: "email:" + email, stored: try writer.credentials(email: email), remote: remote, now: now)
        }
    }

    /// The same for a signed-in user checking their own password: counted
    /// under the account's username, as a log-in to it would be. Nil when
    /// the account has no credentials (deleted meanwhile).
    static func reserve(_ writer: any AccountsWriting & LoginThrottleWriting, userID: String, remote: String, now: Int64) throws -> Decision? {
        guard let stored = try writer.credentials(userID: userID) else { return nil }
        return try reserve(writer, name: stored.username, stored: stored, remote: remote, now: now)
    }

    private static func reserve(_ writer: any LoginThrottleWriting, name username: String, stored: CredentialRecord?,
                                remote: String, now: Int64) throws -> Decision {
        let name = username.lowercased(), address = addressKey(remote)
        let known = try stored.map { try writer.isKnownLoginAddress(userID: $0.userID, address: address, since: now - knownFor) } ?? false
        var keys: [(key: String, rule: LoginRule)] = [("pair:\(name)|\(address)", pairRule)]
        if !known {
            keys.append(("address:\(address)", addressRule))
            if let stored { keys.append(("account:\(stored.username.lowercased())", accountRule)) }
        }
        let buckets = try keys.map { try bucket(writer, $0.key) }
        if let wait = zip(keys, buckets).compactMap({ $0.rule.wait($1, now: now) }).max() { return .refused(wait: wait) }
        for (entry, old) in zip(keys, buckets) { try save(writer, entry.key, entry.rule.reserve(old, now: now)) }
        try writer.pruneLoginCounters(windowStartBefore: now - window, now: now)
        return .granted(Reservation(keys: keys, stored: stored, address: address))
    }

    /// The password was right: the pair starts afresh, the other counters get
    /// their count back, and the address becomes known to the account.
    static func succeeded(_ writer: any LoginThrottleWriting, _ reservation: Reservation, userID: String, now: Int64) throws {
        try refund(writer, reservation, clearingPair: true)
        try writer.rememberLoginAddress(userID: userID, address: reservation.address, now: now, forgetBefore: now - knownFor)
    }

    /// Gives every count of `reservation` back (its password was never checked).
    static func refund(_ writer: any LoginThrottleWriting, _ reservation: Reservation, clearingPair: Bool = false) throws {
        for (index, entry) in reservation.keys.enumerated() {
            if index == 0 && clearingPair { try writer.deleteLoginCounter(entry.key); continue }
            if let b = try bucket(writer, entry.key) { try save(writer, entry.key, entry.rule.refund(b)) }
        }
    }

    static func bucket(_ writer: any LoginThrottleWriting, _ key: String) throws -> LoginBucket? {
        try writer.loginCounter(key).map { LoginBucket(failures: $0.failures, windowStart: $0.windowStart, blockedUntil: $0.blockedUntil) }
    }

    static func save(_ writer: any LoginThrottleWriting, _ key: String, _ b: LoginBucket) throws {
        try writer.saveLoginCounter(key, failures: b.failures, windowStart: b.windowStart, blockedUntil: b.blockedUntil)
    }
}
