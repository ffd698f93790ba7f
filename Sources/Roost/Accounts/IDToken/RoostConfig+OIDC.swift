import Foundation

/// One sign-in provider of `POST /auth/idtoken` (`oidc_providers:`).
public struct OIDCProviderConfig: Sendable, Equatable {
    public var name: String
    /// Accepted `iss` values, exactly (Google uses two spellings).
    public var issuers: [String]
    /// Where the keys are; or found through `discoveryURL`.
    public var jwksURL: String?
    public var discoveryURL: String?
    /// The app's client ids: the `aud` values accepted (bundle id, services id, Android and web ids).
    public var clientIDs: [String]
    /// Whether a first sign-in whose verified email matches an account with that
    /// email verified joins that account (docs/ACCOUNTS.md). On for the presets.
    public var linkByEmail: Bool
    /// Sign in with Apple's token endpoints (`apple` only): with these set, an
    /// `authorization_code` sent with the ID token is exchanged for a refresh
    /// token, revoked when the account is deleted or Apple is unlinked.
    public var apple = AppleTokenSettings()

    /// The presets: Sign in with Apple and Google.
    static func preset(_ name: String) -> OIDCProviderConfig? {
        switch name {
        case "apple":
            OIDCProviderConfig(name: name, issuers: ["https://appleid.apple.com"], jwksURL: "https://appleid.apple.com/auth/keys",
                               discoveryURL: nil, clientIDs: [], linkByEmail: true)
        case "google":
            OIDCProviderConfig(name: name, issuers: ["https://accounts.google.com", "accounts.google.com"], jwksURL: nil,
                               discoveryURL: "https://accounts.google.com/.well-known/openid-configuration", clientIDs: [], linkByEmail: true)
        default: nil
        }
    }
}

extension RoostConfig {
    /// `oidc_providers:` — `apple` and `google` are presets (give `client_ids`);
    /// any other name needs `discovery_url` (Auth0, Keycloak, Azure, Okta, …).
    /// `issuer` and `jwks_url` override what the preset or discovery says.
    mutating func applyOIDC(_ value: Any) throws {
        guard let map = value as? [String: Any] else { throw Invalid("oidc_providers must be a mapping of provider names") }
        for (name, spec) in map {
            guard !name.isEmpty, name.count <= 64, name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-") }) else {
                throw Invalid("oidc_providers.\(name): a name is 1–64 letters, digits, '_' or '-'")
            }
            guard let fields = spec as? [String: Any] else { throw Invalid("oidc_providers.\(name) must be a mapping") }
            var p = OIDCProviderConfig.preset(name)
                ?? OIDCProviderConfig(name: name, issuers: [], jwksURL: nil, discoveryURL: nil, clientIDs: [], linkByEmail: false)
            for (key, v) in fields {
                switch key {
                case "client_ids": p.clientIDs = Setting.list(v)
                case "issuer": p.issuers = Setting.list(v)
                case "jwks_url": p.jwksURL = "\(v)"
                case "discovery_url": p.discoveryURL = "\(v)"
                case "link_by_email": p.linkByEmail = try Setting.bool(v, key: "oidc_providers.\(name).link_by_email", source: "config")
                case "team_id" where name == "apple": p.apple.teamID = "\(v)"
                case "key_id" where name == "apple": p.apple.keyID = "\(v)"
                case "private_key_file" where name == "apple": p.apple.privateKeyFile = "\(v)"
                case "token_endpoint" where name == "apple": p.apple.endpoint = "\(v)"
                case "token_key_file" where name == "apple": p.apple.tokenKeyFile = "\(v)"
                default: throw Invalid("oidc_providers.\(name): unknown setting \"\(key)\"")
                }
            }
            guard !p.clientIDs.isEmpty else { throw Invalid("oidc_providers.\(name) needs client_ids (the accepted audiences)") }
            guard p.jwksURL != nil || p.discoveryURL != nil else { throw Invalid("oidc_providers.\(name) needs discovery_url (or jwks_url and issuer)") }
            guard !p.issuers.isEmpty || p.discoveryURL != nil else { throw Invalid("oidc_providers.\(name) needs issuer with jwks_url") }
            for url in [p.jwksURL, p.discoveryURL].compactMap({ $0 }) where !(url.hasPrefix("https://") || url.hasPrefix("http://")) {
                throw Invalid("oidc_providers.\(name): \(url) is not an http(s) URL")
            }
            guard p.apple.teamID.isEmpty == p.apple.keyID.isEmpty else {
                throw Invalid("oidc_providers.apple: team_id and key_id go together (with private_key_file or ROOST_APPLE_PRIVATE_KEY)")
            }
            guard p.apple.endpoint.hasPrefix("https://") || p.apple.endpoint.hasPrefix("http://") else {
                throw Invalid("oidc_providers.apple.token_endpoint: \(p.apple.endpoint) is not an http(s) URL")
            }
            oidcProviders[name] = p
        }
    }
}

/// `oidc_providers.apple`'s token settings: the team, the Sign in with Apple
/// key (its `.p8` from a file or `ROOST_APPLE_PRIVATE_KEY`, never YAML) and
/// where Apple's `/auth/token` and `/auth/revoke` are (tests: a stand-in).
public struct AppleTokenSettings: Sendable, Equatable {
    public var teamID = ""
    public var keyID = ""
    public var privateKeyFile = ""
    /// The base of `/auth/token` and `/auth/revoke`.
    public var endpoint = "https://appleid.apple.com"
    /// A file holding 32 random bytes as 64 hex digits (the same on every node): refresh tokens
    /// are kept sealed under it (XSalsa20-Poly1305). Empty: kept as Apple sent them.
    public var tokenKeyFile = ""

    /// Whether refresh tokens are fetched and revoked at all.
    public var isSet: Bool { !teamID.isEmpty }
}
