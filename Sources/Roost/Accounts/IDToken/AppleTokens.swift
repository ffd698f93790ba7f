import Foundation
import JSON
import Push
import Store
import Webhooks

/// Sign in with Apple's token endpoints, for App Store guideline 5.1.1(v):
/// the authorization code an app sends with its ID token is exchanged at
/// `<token_endpoint>/auth/token` for a refresh token, kept with the Apple
/// identity (sealed under `token_key_file` when set; never logged, never in
/// an answer), and revoked at
/// `<token_endpoint>/auth/revoke` when the account is deleted or Apple is
/// unlinked. Both calls run on the `AccountJobs` thread (libcurl, blocking,
/// never on a loop) from `_account_jobs`, so a deletion never waits for
/// Apple and a failed call is retried. `client_secret` is an ES256 JWT signed
/// with the team's key (`JWTSigner`, as APNs provider tokens are): `kid` the
/// key id, `iss` the team id, `aud` `https://appleid.apple.com`, `sub` the
/// client id, five minutes long.
final class AppleTokens: @unchecked Sendable {
    static let provider = "apple"
    static let audience = "https://appleid.apple.com"
    let settings: AppleTokenSettings
    private let signer: JWTSigner
    /// Seals refresh tokens at rest (`token_key_file`); nil: kept as sent.
    private let sealer: CursorSeal?
    let timeoutMilliseconds = 10_000
    /// Marks a sealed token in the database.
    static let sealedPrefix = "sealed:"

    init(settings: AppleTokenSettings) throws {
        self.settings = settings
        let pem: String
        if !settings.privateKeyFile.isEmpty {
            do { pem = try String(contentsOfFile: settings.privateKeyFile, encoding: .utf8) } catch {
                throw RoostConfig.Invalid("cannot read oidc_providers.apple.private_key_file \(settings.privateKeyFile): \(error.localizedDescription)")
            }
        } else if let env = ProcessInfo.processInfo.environment["ROOST_APPLE_PRIVATE_KEY"], !env.isEmpty {
            pem = env
        } else {
            throw RoostConfig.Invalid("oidc_providers.apple has team_id but no key: set private_key_file (or ROOST_APPLE_PRIVATE_KEY)")
        }
        do { signer = try JWTSigner(pem: pem, algorithm: .es256) } catch {
            throw RoostConfig.Invalid("oidc_providers.apple's key cannot be used: \(error)")
        }
        if settings.tokenKeyFile.isEmpty {
            sealer = nil
        } else {
            let hex: String
            do { hex = try String(contentsOfFile: settings.tokenKeyFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines) } catch {
                throw RoostConfig.Invalid("cannot read oidc_providers.apple.token_key_file \(settings.tokenKeyFile): \(error.localizedDescription)")
            }
            do { sealer = try CursorSeal(hexKey: hex) } catch {
                throw RoostConfig.Invalid("oidc_providers.apple.token_key_file must hold 32 bytes as 64 hex digits (openssl rand -hex 32)")
            }
        }
    }

    /// A refresh token as it is kept: sealed when there is a key.
    func kept(_ token: String) -> String {
        sealer.map { Self.sealedPrefix + $0.sealSecret(token) } ?? token
    }

    /// The refresh token in what was kept; nil when it is sealed under another key (or none).
    func opened(_ stored: String) -> String? {
        guard stored.hasPrefix(Self.sealedPrefix) else { return stored }
        return sealer?.openSecret(String(stored.dropFirst(Self.sealedPrefix.count)))
    }

    /// The `client_secret` for `clientID`.
    func clientSecret(_ clientID: String, now: Int64 = Int64(Date().timeIntervalSince1970)) throws -> String {
        var header = JSONObject()
        header["kid"] = .string(settings.keyID)
        var claims = JSONObject()
        claims["iss"] = .string(settings.teamID)
        claims["iat"] = .int(now)
        claims["exp"] = .int(now + 300)
        claims["aud"] = .string(Self.audience)
        claims["sub"] = .string(clientID)
        return try signer.token(header: header, claims: claims)
    }

    /// The payload of an `apple_exchange` job.
    static func exchangePayload(code: String, clientID: String) -> String {
        JSONObject([("code", .string(code)), ("client_id", .string(clientID))]).jsonText
    }

    /// The payload of an `apple_revoke` job.
    static func revokePayload(token: String, clientID: String) -> String {
        JSONObject([("token", .string(token)), ("client_id", .string(clientID))]).jsonText
    }

    /// Queues revoking `userID`'s Apple refresh token, if one is kept, in the caller's write.
    static func queueRevoke(_ writer: any DocumentWriting, userID: String) throws {
        guard let kept = try writer.identityToken(provider: provider, userID: userID) else { return }
        try writer.addAccountJob(kind: AccountJobKind.appleRevoke, userID: userID,
                                 payload: revokePayload(token: kept.token, clientID: kept.clientID), nowMilliseconds: Outbox.nowMilliseconds())
    }

    private static func fields(_ payload: String?) -> (String, String)? {
        guard let payload, case .object(let o)? = try? JSONParser.parse(payload),
              let client = o["client_id"]?.stringValue, let value = (o["code"] ?? o["token"])?.stringValue else { return nil }
        return (client, value)
    }

    /// `apple_exchange`: the code for a refresh token, kept with the identity.
    /// When the identity went meanwhile (unlinked, account deleted), the new
    /// token is revoked at once instead.
    func exchange(_ job: AccountJobRecord, pools: StorePools) -> AccountJobs.Verdict {
        guard let (clientID, code) = Self.fields(job.payload) else { return .refused("an unreadable job") }
        let secret: String
        do { secret = try clientSecret(clientID) } catch { return .refused("client_secret not signed: \(error)") }
        let answer = HTTPPoster.postForm(url: settings.endpoint + "/auth/token", fields: [
            ("client_id", clientID), ("client_secret", secret), ("code", code), ("grant_type", "authorization_code"),
        ], timeoutMilliseconds: timeoutMilliseconds)
        guard let status = answer.status else { return .failed("Apple's token endpoint: \(answer.error ?? "no answer")") }
        guard status == 200 else { return Self.verdict(status, answer.body, "token") }
        guard case .object(let o)? = try? JSONParser.parse(answer.body), let token = o["refresh_token"]?.stringValue, !token.isEmpty else {
            return .refused("Apple's token endpoint answered 200 without a refresh_token")
        }
        let (userID, stored) = (job.userID, kept(token))
        let result = MailOutbox.onWriter(pools) { writer -> Bool in
            if try writer.setIdentityToken(provider: Self.provider, userID: userID, clientID: clientID, token: stored) { return true }
            try writer.addAccountJob(kind: AccountJobKind.appleRevoke, userID: userID,
                                     payload: Self.revokePayload(token: stored, clientID: clientID), nowMilliseconds: Outbox.nowMilliseconds())
            return false
        }
        if case .failure(let error) = result { return .failed("the refresh token could not be stored: \(error)") }
        return .done
    }

    /// `apple_revoke`: the refresh token revoked.
    func revoke(_ job: AccountJobRecord) -> AccountJobs.Verdict {
        guard let (clientID, stored) = Self.fields(job.payload) else { return .refused("an unreadable job") }
        guard let token = opened(stored) else {
            return .refused("the kept refresh token does not open with token_key_file (was the key changed?)")
        }
        let secret: String
        do { secret = try clientSecret(clientID) } catch { return .refused("client_secret not signed: \(error)") }
        let answer = HTTPPoster.postForm(url: settings.endpoint + "/auth/revoke", fields: [
            ("client_id", clientID), ("client_secret", secret), ("token", token), ("token_type_hint", "refresh_token"),
        ], timeoutMilliseconds: timeoutMilliseconds)
        guard let status = answer.status else { return .failed("Apple's revoke endpoint: \(answer.error ?? "no answer")") }
        return status == 200 ? .done : Self.verdict(status, answer.body, "revoke")
    }

    /// A refusal (4xx: a used or expired code, a bad client) is final; anything else is tried again.
    static func verdict(_ status: Int, _ body: [UInt8], _ endpoint: String) -> AccountJobs.Verdict {
        var reason = "HTTP \(status)"
        if case .object(let o)? = try? JSONParser.parse(body), let error = o["error"]?.stringValue {
            reason += " " + String(error.prefix(100))
        }
        let message = "Apple's \(endpoint) endpoint answered \(reason)"
        return (400..<500).contains(status) && status != 429 ? .refused(message) : .failed(message)
    }
}
