#include "roost_jose.h"
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ecdsa.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/param_build.h>
#include <string.h>

/// Builds a public key of `type` ("RSA" or "EC") from `params`; NULL on failure.
static EVP_PKEY *key_from(const char *type, OSSL_PARAM *params) {
    EVP_PKEY *key = NULL;
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_name(NULL, type, NULL);
    if (ctx && EVP_PKEY_fromdata_init(ctx) == 1) {
        if (EVP_PKEY_fromdata(ctx, &key, EVP_PKEY_PUBLIC_KEY, params) != 1) key = NULL;
    }
    EVP_PKEY_CTX_free(ctx);
    return key;
}

/// 1 when `sig` (DER for EC, raw for RSA) verifies `message` under `key` with SHA-256.
static int verify_sha256(EVP_PKEY *key, const uint8_t *message, size_t message_len, const uint8_t *sig, size_t sig_len) {
    EVP_MD_CTX *md = EVP_MD_CTX_new();
    int ok = 0;
    if (md && EVP_DigestVerifyInit(md, NULL, EVP_sha256(), NULL, key) == 1) {
        ok = EVP_DigestVerify(md, sig, sig_len, message, message_len) == 1;
    }
    EVP_MD_CTX_free(md);
    return ok;
}

int roost_jose_verify_rs256(const uint8_t *n, size_t n_len, const uint8_t *e, size_t e_len,
                            const uint8_t *message, size_t message_len, const uint8_t *signature, size_t signature_len) {
    if (n_len < 256 || n_len > 1024 || e_len == 0 || e_len > 8 || signature_len != n_len) return 0;
    BIGNUM *bn_n = BN_bin2bn(n, (int)n_len, NULL), *bn_e = BN_bin2bn(e, (int)e_len, NULL);
    OSSL_PARAM_BLD *bld = OSSL_PARAM_BLD_new();
    OSSL_PARAM *params = NULL;
    EVP_PKEY *key = NULL;
    int ok = 0;
    if (bn_n && bn_e && bld && OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_N, bn_n) == 1
        && OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_E, bn_e) == 1 && (params = OSSL_PARAM_BLD_to_param(bld))
        && (key = key_from("RSA", params)) && EVP_PKEY_get_bits(key) >= 2048) {
        ok = verify_sha256(key, message, message_len, signature, signature_len);
    }
    EVP_PKEY_free(key);
    OSSL_PARAM_free(params);
    OSSL_PARAM_BLD_free(bld);
    BN_free(bn_n);
    BN_free(bn_e);
    return ok;
}

int roost_jose_verify_es256(const uint8_t *x, size_t x_len, const uint8_t *y, size_t y_len,
                            const uint8_t *message, size_t message_len, const uint8_t *signature, size_t signature_len) {
    if (x_len != 32 || y_len != 32 || signature_len != 64) return 0;
    uint8_t point[65];
    point[0] = 0x04; // uncompressed
    memcpy(point + 1, x, 32);
    memcpy(point + 33, y, 32);
    OSSL_PARAM params[] = {
        OSSL_PARAM_construct_utf8_string(OSSL_PKEY_PARAM_GROUP_NAME, "prime256v1", 0),
        OSSL_PARAM_construct_octet_string(OSSL_PKEY_PARAM_PUB_KEY, point, sizeof point),
        OSSL_PARAM_construct_end(),
    };
    EVP_PKEY *key = key_from("EC", params); // fails for a point not on the curve
    if (!key) return 0;
    // JOSE's r‖s to the DER ECDSA-Sig-Value OpenSSL verifies.
    ECDSA_SIG *sig = ECDSA_SIG_new();
    BIGNUM *r = BN_bin2bn(signature, 32, NULL), *s = BN_bin2bn(signature + 32, 32, NULL);
    unsigned char *der = NULL;
    int der_len = -1, ok = 0;
    if (sig && r && s && ECDSA_SIG_set0(sig, r, s) == 1) {
        r = s = NULL; // owned by sig now
        der_len = i2d_ECDSA_SIG(sig, &der);
    }
    if (der_len > 0) ok = verify_sha256(key, message, message_len, der, (size_t)der_len);
    OPENSSL_free(der);
    BN_free(r);
    BN_free(s);
    ECDSA_SIG_free(sig);
    EVP_PKEY_free(key);
    return ok;
}

void roost_jose_sha256(const uint8_t *data, size_t len, uint8_t out[32]) {
    unsigned int n = 32;
    EVP_Digest(data, len, out, &n, EVP_sha256(), NULL);
}

void roost_hmac_sha1(const uint8_t *key, size_t key_len, const uint8_t *message, size_t message_len, uint8_t out[20]) {
    unsigned int n = 20;
    HMAC(EVP_sha1(), key, (int)key_len, message, message_len, out, &n);
}
