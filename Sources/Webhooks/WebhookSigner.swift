import CSodium
import Foundation

/// Signs deliveries the Standard Webhooks way: `webhook-signature` is
/// `v1,` + base64(HMAC-SHA256(key, "<id>.<timestamp>.<body>")), where the
/// key is the base64 after the secret's `whsec_` prefix.
public enum WebhookSigner {
    public static let prefix = "whsec_"

    /// The signing key of a `whsec_…` secret, or nil when it is malformed.
    public static func key(of secret: String) -> [UInt8]? {
        guard secret.hasPrefix(prefix), let data = Data(base64Encoded: String(secret.dropFirst(prefix.count))), data.count >= 16 else {
            return nil
        }
        return [UInt8](data)
    }

    /// A new random secret: `whsec_` + base64 of 32 random bytes.
    public static func generateSecret() -> String {
        _ = sodium_init()
        var bytes = [UInt8](repeating: 0, count: 32)
        randombytes_buf(&bytes, bytes.count)
        return prefix + Data(bytes).base64EncodedString()
    }

    /// The `webhook-signature` header value for one attempt.
    public static func signature(id: String, timestamp: Int64, body: [UInt8], key: [UInt8]) -> String {
        _ = sodium_init()
        var state = crypto_auth_hmacsha256_state()
        var mac = [UInt8](repeating: 0, count: Int(crypto_auth_hmacsha256_BYTES))
        crypto_auth_hmacsha256_init(&state, key, key.count)
        let head = Array("\(id).\(timestamp).".utf8)
        crypto_auth_hmacsha256_update(&state, head, UInt64(head.count))
        crypto_auth_hmacsha256_update(&state, body, UInt64(body.count))
        crypto_auth_hmacsha256_final(&state, &mac)
        return "v1," + Data(mac).base64EncodedString()
    }
}
