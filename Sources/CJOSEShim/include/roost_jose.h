#ifndef ROOST_JOSE_H
#define ROOST_JOSE_H
// Signature checks of JSON Web Tokens with OpenSSL's libcrypto (EVP): the
// key is built from a JWK's members, so the algorithm is the key's, never the
// token header's. No cryptography is done here by hand.
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// RS256: RSASSA-PKCS1-v1_5 with SHA-256 under the RSA key (n, e), big-endian
/// bytes as a JWK's `n` and `e` decode to. Keys under 2048 bits are refused.
/// Returns 1 for a valid signature, 0 for any other outcome.
int roost_jose_verify_rs256(const uint8_t *n, size_t n_len, const uint8_t *e, size_t e_len,
                            const uint8_t *message, size_t message_len, const uint8_t *signature, size_t signature_len);

/// ES256: ECDSA on P-256 with SHA-256 under the point (x, y) (32 bytes each);
/// `signature` is JOSE's raw r‖s (64 bytes). Returns 1 for valid, else 0.
int roost_jose_verify_es256(const uint8_t *x, size_t x_len, const uint8_t *y, size_t y_len,
                            const uint8_t *message, size_t message_len, const uint8_t *signature, size_t signature_len);

/// HMAC-SHA1 of `message` under `key` into `out` (20 bytes): RFC 6238's TOTP default, which authenticator apps use.
void roost_hmac_sha1(const uint8_t *key, size_t key_len, const uint8_t *message, size_t message_len, uint8_t out[20]);

/// SHA-256 of `data` into `out` (32 bytes).
void roost_jose_sha256(const uint8_t *data, size_t len, uint8_t out[32]);

#ifdef __cplusplus
}
#endif
#endif
