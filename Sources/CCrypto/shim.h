#ifndef ROOST_CCRYPTO_SHIM_H
#define ROOST_CCRYPTO_SHIM_H
// OpenSSL's libcrypto, for SHA-256 of uploads: it uses the CPU's SHA
// extensions, about five times faster than libsodium's portable code.
// Also signing push providers' JWTs (ES256, RS256) from PEM keys.
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/ecdsa.h>
#include <openssl/err.h>
#endif
