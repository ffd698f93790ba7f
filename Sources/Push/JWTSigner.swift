import CCrypto
import JSON
import Store

/// Signs compact JWTs with a private key from a PEM file, through OpenSSL:
/// ES256 (APNs provider tokens: P-256, SHA-256, the signature as raw r‖s,
/// 64 bytes, not DER) and RS256 (Google service-account assertions).
/// The key never leaves this type and is never logged.
public final class JWTSigner: @unchecked Sendable {
    public enum Algorithm: String, Sendable { case es256 = "ES256", rs256 = "RS256" }

    public struct KeyError: Error, CustomStringConvertible {
        public let description: String
    }

    public let algorithm: Algorithm
    private let key: OpaquePointer

    /// Reads a PEM private key (`-----BEGIN PRIVATE KEY-----`, as Apple's
    /// `.p8` and Google's `private_key` are) and checks it fits `algorithm`.
    public init(pem: String, algorithm: Algorithm) throws {
        let bytes = Array(pem.utf8)
        let parsed: OpaquePointer? = bytes.withUnsafeBytes { raw in
            guard let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count)) else { return nil }
            defer { BIO_free(bio) }
            // An encrypted key fails here instead of OpenSSL asking for its password on a terminal.
            return PEM_read_bio_PrivateKey(bio, nil, { _, _, _, _ in 0 }, nil)
        }
        ERR_clear_error()
        guard let parsed else { throw KeyError(description: "not a PEM private key") }
        let type = EVP_PKEY_get_base_id(parsed)
        switch algorithm {
        case .es256 where type == EVP_PKEY_EC && EVP_PKEY_get_bits(parsed) == 256: break
        case .rs256 where type == EVP_PKEY_RSA && EVP_PKEY_get_bits(parsed) >= 2048: break
        default:
            EVP_PKEY_free(parsed)
            throw KeyError(description: algorithm == .es256 ? "the key is not a P-256 EC key" : "the key is not an RSA key of 2048 bits or more")
        }
        self.key = parsed
        self.algorithm = algorithm
    }

    deinit { EVP_PKEY_free(key) }

    /// `base64url(header).base64url(claims).base64url(signature)`; the
    /// header's `alg` and `typ` are set here, other members come from `header`.
    public func token(header extra: JSONObject = JSONObject(), claims: JSONObject) throws -> String {
        var header = JSONObject()
        header["alg"] = .string(algorithm.rawValue)
        header["typ"] = .string("JWT")
        for (k, v) in extra { header[k] = v }
        let input = Base64URL.encode(Array(header.jsonText.utf8)) + "." + Base64URL.encode(Array(claims.jsonText.utf8))
        return input + "." + Base64URL.encode(try sign(Array(input.utf8)))
    }

    /// The signature of `message` with SHA-256: raw r‖s for ES256, PKCS #1 v1.5 for RS256.
    public func sign(_ message: [UInt8]) throws -> [UInt8] {
        guard let ctx = EVP_MD_CTX_new() else { throw KeyError(description: "out of memory") }
        defer { EVP_MD_CTX_free(ctx) }
        guard EVP_DigestSignInit(ctx, nil, EVP_sha256(), nil, key) == 1 else { throw failure("EVP_DigestSignInit") }
        var length = 0
        guard EVP_DigestSign(ctx, nil, &length, message, message.count) == 1 else { throw failure("EVP_DigestSign") }
        var signature = [UInt8](repeating: 0, count: length)
        guard EVP_DigestSign(ctx, &signature, &length, message, message.count) == 1 else { throw failure("EVP_DigestSign") }
        signature.removeSubrange(length...)
        return algorithm == .es256 ? try Self.rawSignature(der: signature) : signature
    }

    /// An ECDSA signature in DER (`SEQUENCE { r, s }`) as JOSE wants it: r and s, 32 bytes each.
    static func rawSignature(der: [UInt8]) throws -> [UInt8] {
        var pointer: UnsafePointer<UInt8>? = nil
        let parsed: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            pointer = buffer.baseAddress
            return d2i_ECDSA_SIG(nil, &pointer, buffer.count)
        }
        guard let sig = parsed else { throw KeyError(description: "OpenSSL made an unreadable ECDSA signature") }
        defer { ECDSA_SIG_free(sig) }
        var out = [UInt8](repeating: 0, count: 64)
        let ok = out.withUnsafeMutableBufferPointer { buffer in
            BN_bn2binpad(ECDSA_SIG_get0_r(sig), buffer.baseAddress, 32) == 32
                && BN_bn2binpad(ECDSA_SIG_get0_s(sig), buffer.baseAddress! + 32, 32) == 32
        }
        guard ok else { throw KeyError(description: "an ECDSA signature component does not fit 32 bytes") }
        return out
    }

    private func failure(_ step: String) -> KeyError {
        let code = ERR_get_error()
        ERR_clear_error()
        return KeyError(description: "\(step) failed (OpenSSL error \(code))")
    }
}
