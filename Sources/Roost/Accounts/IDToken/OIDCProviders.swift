import Auth
import Foundation
import HTTP
import Jobs
import Logging

/// The configured sign-in providers and the thread pool that verifies their
/// ID tokens (a key fetch blocks; never on an event loop, a reader or a hash thread).
final class OIDCProviders: Sendable {
    let providers: [String: ProviderKeys]
    let pool: WorkerPool<Void, @Sendable () -> Void>

    init(_ configs: [String: OIDCProviderConfig], logger: Logger) {
        providers = configs.mapValues { ProviderKeys(config: $0, logger: logger) }
        pool = WorkerPool(name: "idtoken", threads: 2, capacity: 512, logger: logger, makeContext: {},
                          run: { _, jobs in for job in jobs { job() } })
    }

    func start() throws { if !providers.isEmpty { try pool.start() } }
    func shutdown() { if !providers.isEmpty { pool.shutdown() } }

    /// A verified token's claims, with its provider's settings.
    struct Verified: Sendable {
        let provider: OIDCProviderConfig
        let claims: IDTokenVerifier.Claims
        /// SHA-256 of the token: a used token is remembered by it until it expires.
        let tokenHash: String
    }

    static func unknown(_ name: String) -> HTTPError {
        HTTPError(.invalidDocument, "No sign-in provider \"\(name)\" is configured.")
    }

    static func refusal(_ why: String) -> HTTPError {
        HTTPError(.invalidIDToken, "The ID token was refused: \(why).")
    }

    /// Verifies `token` from `provider` (on a pool thread).
    func verify(provider name: String, token: String, nonce: String, now: Int64) throws -> Verified {
        guard let keys = providers[name] else { throw Self.unknown(name) }
        do {
            let parsed = try IDTokenVerifier.parse(token)
            guard let kid = parsed.kid, kid.utf8.count <= 256, let key = keys.key(kid, now: now) else { throw IDTokenVerifier.Failure.unknownKey }
            let rules = IDTokenVerifier.Rules(issuers: keys.acceptedIssuers, audiences: keys.config.clientIDs)
            let claims = try IDTokenVerifier.verify(parsed, key: key, rules: rules, rawNonce: nonce, now: now)
            return Verified(provider: keys.config, claims: claims, tokenHash: IDTokenVerifier.sha256Hex(token))
        } catch let failure as IDTokenVerifier.Failure {
            throw Self.refusal(Self.reason(failure))
        }
    }

    static func reason(_ failure: IDTokenVerifier.Failure) -> String {
        switch failure {
        case .malformed: "not a well-formed signed JWT"
        case .unknownKey: "signed by a key the provider does not publish"
        case .algorithm: "its algorithm is not the key's"
        case .signature: "the signature does not verify"
        case .issuer: "wrong issuer"
        case .audience: "not issued for this app (audience)"
        case .expired: "expired"
        case .notYetValid: "issued in the future"
        case .nonce: "the nonce does not match"
        }
    }
}
