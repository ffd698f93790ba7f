#ifndef ROOST_CCRYPTO_SHIM_H
#define ROOST_CCRYPTO_SHIM_H
// OpenSSL's libcrypto, for SHA-256 of uploads: it uses the CPU's SHA
// extensions, about five times faster than libsodium's portable code.
#include <openssl/evp.h>
#endif
