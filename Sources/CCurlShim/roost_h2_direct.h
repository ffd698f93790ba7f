#ifndef ROOST_H2_DIRECT_H
#define ROOST_H2_DIRECT_H
// Internal: the HTTP/2 push client's own transport, straight on nghttp2 and
// OpenSSL (roost_h2_direct.c). roost_h2.c sends through it whatever it can
// and hands the rest (a proxy in the environment, an origin that does not
// offer h2 in ALPN) to libcurl's multi interface.
#include "roost_h2.h"

typedef struct roost_h2_direct roost_h2_direct;

/// A transport that trusts `ca_file` (a PEM bundle) when not NULL or empty,
/// else the system's CAs. NULL with the reason in `err`.
roost_h2_direct *roost_h2_direct_new(const char *ca_file, char *err, size_t errlen);

/// Closes every connection and frees the transport.
void roost_h2_direct_free(roost_h2_direct *d);

/// Connections opened so far.
long roost_h2_direct_connections(const roost_h2_direct *d);

/// Sends what it can of `req` (all within `timeout_ms`): sets handled[i] to 1
/// and fills out[i] for each request it answered or failed, leaves handled[i]
/// 0 for those libcurl must send (out[i] untouched).
void roost_h2_direct_perform(roost_h2_direct *d, const roost_h2_request *req, roost_h2_response *out,
                             unsigned char *handled, size_t n, long timeout_ms);

#endif
