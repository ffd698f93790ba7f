import Auth
import HTTP
import JSON
import Store

/// Two-factor checks on the writer: a TOTP code (RFC 6238, once per step)
/// or a recovery code (once), counted per account (`totp:<user>`, 5 wrong
/// in 15 minutes, then blocks doubling from 2 s). A log-in of an account
/// with two-factor on answers 202 with a ticket (5 minutes, 5 tries) that
/// `POST /auth/2fa/verify` turns into a session with a code.
enum TwoFactor {
    enum Outcome: Sendable {
        case right
        case wrong
        case throttled(wait: Int64)
    }

    static let ticketLifetime: Int64 = 300
    static let recoveryCount = 10
    static let required = HTTPError(.twoFactorRequired, "This needs a current two-factor code (or a recovery code) in \"twoFactorCode\".")

    static func check(_ writer: any AccountsWriting & LoginThrottleWriting, account: CredentialRecord, code: String, now: Int64) throws -> Outcome {
        let key = "totp:\(account.userID)"
        if let wait = try AccountCodes.charge(writer, [(key, AccountCodes.guessRule)], now: now) { return .throttled(wait: wait) }
        guard code.utf8.count <= 64, let text = account.totpSecret, let secret = TOTP.fromBase32(text) else { return .wrong }
        if let step = TOTP.match(code, secret: secret, now: now, after: account.totpLastStep),
           try writer.useTwoFactorStep(userID: account.userID, step: step) {
            try writer.deleteLoginCounter(key)
            return .right
        }
        let hash = recoveryHash(code, userID: account.userID)
        if let index = account.totpRecovery.firstIndex(where: { SessionToken.constantTimeEquals($0, hash) }) {
            var rest = account.totpRecovery
            rest.remove(at: index)
            try writer.setTwoFactor(userID: account.userID, secret: account.totpSecret, enabled: account.totpEnabled, recovery: rest)
            try writer.deleteLoginCounter(key)
            return .right
        }
        return .wrong
    }

    /// The answer for a change that needs a code: nil when it may go ahead.
    static func gate(_ writer: any AccountsWriting & LoginThrottleWriting, userID: String, code: String?, now: Int64) throws -> Response? {
        guard let account = try writer.credentials(userID: userID), account.totpEnabled else { return nil }
        guard let code else { return required.response }
        switch try check(writer, account: account, code: code, now: now) {
        case .right: return nil
        case .wrong: return AccountCodes.invalidCode.response
        case .throttled(let wait): return AccountCodes.throttled(wait: wait).response
        }
    }

    static func recoveryHash(_ code: String, userID: String) -> String {
        OneTimeCode.hash(code.uppercased().filter { $0.isLetter || $0.isNumber }, userID: userID, purpose: "recovery")
    }

    /// Ten new recovery codes (`XXXXX-XXXXX`, 50 random bits each) and their hashes.
    static func recoveryCodes(userID: String) -> (codes: [String], hashes: [String]) {
        let codes = (0..<recoveryCount).map { _ -> String in
            let text = TOTP.base32(Array(TOTP.newSecret().prefix(7))).prefix(10)
            return text.prefix(5) + "-" + text.suffix(5)
        }
        return (codes, codes.map { recoveryHash($0, userID: userID) })
    }

    /// The 202 of a log-in that needs its second factor.
    static func ticket(_ writer: any AccountsWriting, userID: String, now: Int64) throws -> Response {
        let (_, ticket) = try AccountCodes.issue(writer, userID: userID, purpose: .twoFactor, email: "", lifetime: ticketLifetime, now: now)
        return .json(202, "{\"twoFactorRequired\":true,\"ticket\":\(JSONWriter.quoted(ticket))}")
    }

    /// A session for `userID`, or a ticket when two-factor is on.
    static func signInOrTicket(_ writer: any DocumentWriting, userID: String, status: Int, lifetime: Int64) throws -> Response {
        if let account = try writer.credentials(userID: userID), account.totpEnabled {
            return try ticket(writer, userID: userID, now: Authenticator.now)
        }
        let text = try writer.document(in: AccountHandlers.users, id: userID) ?? "{}"
        return .json(status, try AccountHandlers.signedIn(writer, userID: userID, userText: text, lifetime: lifetime))
    }
}
