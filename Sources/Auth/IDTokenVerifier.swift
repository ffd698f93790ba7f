import CJOSEShim
import JSON

/// A public key from a provider's JSON Web Key Set, with the one algorithm
/// its type allows: RSA keys verify RS256 only, P-256 keys ES256 only.
public struct JWK: Sendable {
    public enum Material: Sendable {
        case rsa(n: [UInt8], e: [UInt8])
        case p256(x: [UInt8], y: [UInt8])
    }

    public let kid: String
    public let material: Material

    public var algorithm: String {
        switch material {
        case .rsa: "RS256"
        case .p256: "ES256"
        }
    }

    /// The signing keys of a JWKS document (`{"keys": [...]}`) this verifier
    /// can use; others (encryption keys, other curves and algorithms) are left out.
    public static func keySet(_ document: JSONValue) -> [JWK] {
        guard case .object(let root) = document, case .array(let keys)? = root["keys"] else { return [] }
        return keys.compactMap { value in
            guard case .object(let k) = value, case .string(let kid)? = k["kid"] else { return nil }
            if case .string(let use)? = k["use"], use != "sig" { return nil }
            let alg: String? = if case .string(let a)? = k["alg"] { a } else { nil }
            func bytes(_ name: String) -> [UInt8]? {
                guard case .string(let text)? = k[name] else { return nil }
                return Base64URL.decode(Substring(text))
            }
            switch k["kty"] {
            case .string("RSA")?:
                guard alg == nil || alg == "RS256", let n = bytes("n"), let e = bytes("e") else { return nil }
                return JWK(kid: kid, material: .rsa(n: Array(n.drop { $0 == 0 }), e: e))
            case .string("EC")?:
                guard k["crv"] == .string("P-256"), alg == nil || alg == "ES256", let x = bytes("x"), let y = bytes("y") else { return nil }
                return JWK(kid: kid, material: .p256(x: x, y: y))
            default:
                return nil
            }
        }
    }
}

/// Verifies an OpenID Connect ID token (a JWS in compact form) as the native
/// Sign in with Apple / Google flows hand it to an app: the signature with
/// OpenSSL under a key the provider published (its algorithm pinned by the
/// key, never taken from the token's header alone), `iss` exactly,
/// `aud` against an allow-list, `exp`/`iat`/`nbf` with a leeway, and the
/// nonce (the SHA-256 hex of the app's raw nonce). Pure: keys and the clock
/// are passed in.
public enum IDTokenVerifier {
    /// Why a token was refused; each check has its own.
    public enum Failure: Error, Sendable, Equatable {
        case malformed, unknownKey, algorithm, signature, issuer, audience, expired, notYetValid, nonce
    }

    public struct Rules: Sendable {
        public var issuers: [String]
        public var audiences: [String]
        public var leeway: Int64
        public init(issuers: [String], audiences: [String], leeway: Int64 = 60) {
            self.issuers = issuers
            self.audiences = audiences
            self.leeway = leeway
        }
    }

    /// A token split and decoded, not yet trusted.
    public struct Parsed: Sendable {
        public let header: JSONObject
        public let payload: JSONObject
        let signingInput: [UInt8]
        let signature: [UInt8]
        public var kid: String? { if case .string(let k)? = header["kid"] { return k }; return nil }
    }

    /// What a verified token says.
    public struct Claims: Sendable {
        public let subject: String
        public let email: String?
        /// `email_verified`: true, or the string "true" (Apple sends either).
        public let emailVerified: Bool
        public let expiresAt: Int64
        /// The `aud` value that matched the allow-list (the client id the token, and Apple's authorization code, were issued to).
        public var audience: String = ""
    }

    public static let maxLength = 16 * 1024

    public static func parse(_ token: String) throws(Failure) -> Parsed {
        guard token.utf8.count <= maxLength else { throw .malformed }
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let h = Base64URL.decode(parts[0]), let p = Base64URL.decode(parts[1]), let s = Base64URL.decode(parts[2]),
              case .object(let header)? = try? JSONParser.parse(h), case .object(let payload)? = try? JSONParser.parse(p) else {
            throw .malformed
        }
        return Parsed(header: header, payload: payload, signingInput: Array((parts[0] + "." + parts[1]).utf8), signature: s)
    }

    /// Checks `parsed` under `key` (the provider's key of the token's `kid`).
    public static func verify(_ parsed: Parsed, key: JWK, rules: Rules, rawNonce: String, now: Int64) throws(Failure) -> Claims {
        // The key decides the algorithm; a header that names another (or none) is refused.
        guard parsed.header["alg"] == .string(key.algorithm) else { throw .algorithm }
        guard checkSignature(parsed, key) else { throw .signature }
        let claims = parsed.payload
        guard case .string(let iss)? = claims["iss"], rules.issuers.contains(iss) else { throw .issuer }
        let audiences: [String] = switch claims["aud"] {
        case .string(let a)?: [a]
        case .array(let list)?: list.compactMap { if case .string(let a) = $0 { a } else { nil } }
        default: []
        }
        guard let audience = audiences.first(where: rules.audiences.contains) else { throw .audience }
        guard let exp = number(claims["exp"]), now <= exp + rules.leeway else { throw .expired }
        guard let iat = number(claims["iat"]), iat <= now + rules.leeway else { throw .notYetValid }
        if let nbf = number(claims["nbf"]), nbf > now + rules.leeway { throw .notYetValid }
        guard case .string(let nonce)? = claims["nonce"], !rawNonce.isEmpty, nonce.lowercased() == sha256Hex(rawNonce) else { throw .nonce }
        guard case .string(let sub)? = claims["sub"], !sub.isEmpty, sub.utf8.count <= 255 else { throw .malformed }
        let email: String? = if case .string(let e)? = claims["email"] { e } else { nil }
        let verified = claims["email_verified"] == .bool(true) || claims["email_verified"] == .string("true")
        return Claims(subject: sub, email: email, emailVerified: verified, expiresAt: exp, audience: audience)
    }

    static func checkSignature(_ parsed: Parsed, _ key: JWK) -> Bool {
        let m = parsed.signingInput, s = parsed.signature
        switch key.material {
        case .rsa(let n, let e):
            return roost_jose_verify_rs256(n, n.count, e, e.count, m, m.count, s, s.count) == 1
        case .p256(let x, let y):
            return roost_jose_verify_es256(x, x.count, y, y.count, m, m.count, s, s.count) == 1
        }
    }

    static func number(_ value: JSONValue?) -> Int64? {
        switch value {
        case .int(let i)?: return i
        case .double(let d)? where d.isFinite && abs(d) < 1e15: return Int64(d)
        default: return nil
        }
    }

    /// Lower-case hex SHA-256 of `text`'s UTF-8 (the nonce convention of Apple and Firebase).
    public static func sha256Hex(_ text: String) -> String {
        var digest = [UInt8](repeating: 0, count: 32)
        let bytes = Array(text.utf8)
        roost_jose_sha256(bytes, bytes.count, &digest)
        return digest.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }
}
