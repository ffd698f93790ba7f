import Auth
import Foundation
import JSON
import Logging
import Webhooks

/// One provider's signing keys, cached by `kid` for as long as its key set's
/// `Cache-Control: max-age` says (an hour without one). A token whose `kid`
/// is unknown triggers one refetch, shared by every request that wants it
/// and at most one per `minRefetch` seconds (a flood of made-up kids costs
/// the provider nothing); when the provider cannot be reached, the keys
/// fetched before keep serving (stale beats down).
final class ProviderKeys: @unchecked Sendable {
    let config: OIDCProviderConfig
    let logger: Logger
    static let minRefetch: Int64 = 10
    static let timeoutMilliseconds = 5_000

    private let condition = NSCondition()
    private var keys: [String: JWK] = [:]
    private var freshUntil: Int64 = 0
    private var lastFetch: Int64 = .min / 2
    private var fetching = false
    /// From discovery (or the config): the issuers and key set URL in use.
    private var issuers: [String]
    private var jwksURL: String?

    init(config: OIDCProviderConfig, logger: Logger) {
        self.config = config
        self.logger = logger
        issuers = config.issuers
        jwksURL = config.jwksURL
    }

    /// The accepted issuers (after discovery, if it ran).
    var acceptedIssuers: [String] { condition.lock(); defer { condition.unlock() }; return issuers }

    /// The key `kid` names, fetching the key set when it is stale or lacks it (see above).
    func key(_ kid: String, now: Int64) -> JWK? {
        condition.lock()
        defer { condition.unlock() }
        if let key = keys[kid], now < freshUntil { return key }
        if fetching {
            while fetching { _ = condition.wait(until: Date().addingTimeInterval(Double(Self.timeoutMilliseconds * 3) / 1000)) }
            return keys[kid]
        }
        guard now - lastFetch >= Self.minRefetch else { return keys[kid] } // rate-limited: what we have, stale or not
        fetching = true
        lastFetch = now
        let (url, discover) = (jwksURL, config.discoveryURL)
        condition.unlock()
        let fetched = fetch(jwksURL: url, discoveryURL: discover)
        condition.lock()
        fetching = false
        condition.broadcast()
        if let fetched {
            keys = Dictionary(fetched.keys.map { ($0.kid, $0) }, uniquingKeysWith: { first, _ in first })
            freshUntil = now + fetched.maxAge
            if let url = fetched.jwksURL { jwksURL = url }
            if let issuer = fetched.issuer, config.issuers.isEmpty { issuers = [issuer] }
        }
        return keys[kid]
    }

    struct Fetched {
        let keys: [JWK]
        let maxAge: Int64
        let jwksURL: String?
        let issuer: String?
    }

    /// Discovery (when there is no key set URL yet), then the key set. Nil when the provider cannot be reached.
    private func fetch(jwksURL: String?, discoveryURL: String?) -> Fetched? {
        var url = jwksURL
        var issuer: String? = nil
        if url == nil, let discoveryURL {
            let d = HTTPGetter.get(url: discoveryURL, timeoutMilliseconds: Self.timeoutMilliseconds)
            guard d.status == 200, case .object(let doc)? = try? JSONParser.parse(d.body), case .string(let jwks)? = doc["jwks_uri"],
                  jwks.hasPrefix("https://") || jwks.hasPrefix("http://") else {
                logger.warning("OIDC discovery failed", metadata: ["provider": "\(config.name)", "error": "\(d.error ?? "HTTP \(d.status ?? 0)")"])
                return nil
            }
            url = jwks
            if case .string(let iss)? = doc["issuer"] { issuer = iss }
        }
        guard let url else { return nil }
        let r = HTTPGetter.get(url: url, timeoutMilliseconds: Self.timeoutMilliseconds)
        guard r.status == 200, let document = try? JSONParser.parse(r.body) else {
            logger.warning("OIDC key set fetch failed; keeping the keys we have", metadata: [
                "provider": "\(config.name)", "error": "\(r.error ?? "HTTP \(r.status ?? 0)")"])
            return nil
        }
        let keys = JWK.keySet(document)
        logger.info("OIDC key set fetched", metadata: ["provider": "\(config.name)", "keys": "\(keys.count)"])
        return Fetched(keys: keys, maxAge: Self.maxAge(r.cacheControl), jwksURL: url, issuer: issuer)
    }

    /// Seconds a key set stays fresh: `max-age` (0 for `no-store`/`no-cache`), an hour without one, at most a day.
    static func maxAge(_ cacheControl: String?) -> Int64 {
        guard let cacheControl else { return 3600 }
        var age: Int64 = 3600
        for part in cacheControl.lowercased().split(separator: ",") {
            let item = part.trimmingCharacters(in: .whitespaces)
            if item == "no-store" || item == "no-cache" { return 0 }
            if item.hasPrefix("max-age="), let n = Int64(item.dropFirst(8)) { age = n }
        }
        return min(max(age, 0), 86_400)
    }
}
