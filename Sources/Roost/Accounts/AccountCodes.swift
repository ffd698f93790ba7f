import Auth
import HTTP
import JSON
import Store

/// One-time codes (verification, password reset, email change) and the
/// throttles around them, on the writer: every step that sends a mail or
/// checks a code is counted atomically with every other, and the same
/// counters are charged whether or not the address has an account, so
/// neither the answer nor its timing tells.
///
/// - `mail:<address>` and `mailacct:<user>`: 3 mails an hour to one address
///   or account, then blocks doubling from 2 s (to 1 h).
/// - `mailip:<client address>`: 60 mail requests an hour from one client.
/// - `code:<address or user>`: 5 wrong codes in 15 min, then blocks doubling
///   from 2 s (to 15 min); and a code dies after 5 wrong tries of its own.
enum AccountCodes {
    enum Purpose: String, Sendable {
        case verifyEmail = "verify_email"
        case passwordReset = "password_reset"
        case emailChange = "email_change"
        /// A log-in waiting for its second factor (the "link" is the ticket).
        case twoFactor = "two_factor"
    }

    /// The path under `/auth/` of each purpose's routes and browser page.
    static func page(_ purpose: Purpose) -> String {
        switch purpose {
        case .verifyEmail: "verify-email"
        case .passwordReset: "password-reset"
        case .emailChange: "email-change"
        case .twoFactor: "2fa"
        }
    }

    static let mailRule = LoginRule(.block(allowed: 3, maxBlock: 3600), window: 3600)
    static let clientRule = LoginRule(.block(allowed: 60, maxBlock: 3600), window: 3600)
    static let guessRule = LoginRule(.block(allowed: 5, maxBlock: 15 * 60), window: 15 * 60)
    /// Wrong tries one code survives.
    static let maxAttempts: Int64 = 5

    static let invalidCode = HTTPError(.invalidCode, "The code or link is wrong, expired or already used; ask for a new one.")

    static func throttled(wait: Int64) -> HTTPError {
        HTTPError(.tooManyAttempts, "Too many requests for this address; wait before trying again.",
                  headers: Headers([("Retry-After", "\(wait)")]))
    }

    /// Counts one attempt on every counter of `keys` unless one refuses; the wait when refused.
    static func charge(_ writer: any LoginThrottleWriting, _ keys: [(String, LoginRule)], now: Int64) throws -> Int64? {
        let buckets = try keys.map { try LoginThrottle.bucket(writer, $0.0) }
        if let wait = zip(keys, buckets).compactMap({ $0.1.wait($1, now: now) }).max() { return wait }
        for (entry, old) in zip(keys, buckets) { try LoginThrottle.save(writer, entry.0, entry.1.reserve(old, now: now)) }
        try writer.pruneLoginCounters(windowStartBefore: now - 3600, now: now)
        return nil
    }

    /// A new code and link for `userID`, stored hashed (replacing the
    /// account's earlier one of this purpose); the plain code and link token.
    static func issue(_ writer: any AccountsWriting, userID: String, purpose: Purpose, email: String, lifetime: Int64,
                      now: Int64) throws -> (code: String, link: String) {
        let code = OneTimeCode.generate()
        let (link, linkHash) = SessionToken.generate()
        try writer.saveAccountCode(AccountCode(userID: userID, purpose: purpose.rawValue, email: email,
                                               codeHash: OneTimeCode.hash(code, userID: userID, purpose: purpose.rawValue),
                                               linkHash: linkHash, expiresAt: now + lifetime))
        return (code, link)
    }

    /// What a client sent to prove it holds a code: the 6 digits (with the
    /// account they were for), or the link's token.
    enum Proof: Sendable {
        case code(String)
        case link(String)
    }

    /// The stored code `proof` matches, or nil (a wrong code is counted
    /// against the code, which dies after `maxAttempts`). `userID` is the
    /// account a typed code is for; nil when unknown (nothing matches).
    /// Does not consume the code.
    static func check(_ writer: any AccountsWriting, proof: Proof, userID: String?, purpose: Purpose, now: Int64) throws -> AccountCode? {
        switch proof {
        case .link(let token):
            guard token.utf8.count <= 128, let stored = try writer.accountCode(linkHash: SessionToken.hash(token)),
                  stored.purpose == purpose.rawValue, stored.expiresAt > now, stored.attempts < maxAttempts else { return nil }
            return stored
        case .code(let code):
            // Unknown accounts still compute a hash: the same work either way.
            let hash = OneTimeCode.hash(code, userID: userID ?? "", purpose: purpose.rawValue)
            guard let userID, let stored = try writer.accountCode(userID: userID, purpose: purpose.rawValue) else { return nil }
            guard stored.expiresAt > now, stored.attempts < maxAttempts else {
                try writer.deleteAccountCode(userID: userID, purpose: purpose.rawValue, codeHash: nil)
                return nil
            }
            guard SessionToken.constantTimeEquals(stored.codeHash, hash) else {
                if stored.attempts + 1 >= maxAttempts {
                    try writer.deleteAccountCode(userID: userID, purpose: purpose.rawValue, codeHash: nil)
                } else {
                    try writer.countCodeAttempt(userID: userID, purpose: purpose.rawValue)
                }
                return nil
            }
            return stored
        }
    }

    /// The proof in a request body: `{"code": "123456"}` or `{"token": "…"}`, never both.
    static func proof(_ fields: JSONObject) throws -> Proof {
        switch (try fields.string("token"), try fields.string("code")) {
        case (let token?, nil): return .link(token)
        case (nil, let code?):
            guard code.count == 6, code.allSatisfy(\.isASCII), code.allSatisfy(\.isNumber) else { throw invalidCode }
            return .code(code)
        default: throw HTTPError(.invalidDocument, "Send the 6-digit code as \"code\", or the link's token as \"token\" (one of them).")
        }
    }
}

extension JSONObject {
    /// The member `key` when it is a string; nil when it is absent. Any other
    /// type is 400 `InvalidDocument`: a field sent wrong is never taken as missing.
    func string(_ key: String) throws -> String? {
        switch self[key] {
        case nil: return nil
        case .string(let s)?: return s
        case _?: throw HTTPError(.invalidDocument, "\(key) must be a string.")
        }
    }
}
