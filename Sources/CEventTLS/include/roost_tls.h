#ifndef ROOST_TLS_SHIM_H
#define ROOST_TLS_SHIM_H

#include <stddef.h>

struct bufferevent;
struct event_base;

/// A server TLS context that can be swapped while connections use the old
/// one: each new connection takes the context current at accept time (its
/// SSL holds a reference), so a reload never touches open connections.
/// No OpenSSL types cross this header.
typedef struct roost_tls roost_tls;

/// Loads a PEM certificate chain (leaf first) and its PEM private key into a
/// context with Roost's defaults: TLS 1.2 and 1.3 only, forward-secret
/// AEAD suites for TLS 1.2, ALPN http/1.1, no renegotiation or compression.
/// Returns NULL and a reason in `error` when the pair does not load.
roost_tls *roost_tls_new(const char *certificate, const char *key, char *error, size_t error_length);

/// Loads the pair again into a new context and, only if it loads, makes it
/// the one new connections use. Returns 0, or -1 with a reason in `error`
/// (the running context stays).
int roost_tls_reload(roost_tls *tls, const char *certificate, const char *key, char *error, size_t error_length);

/// Writes "subject; expires <date>" of the current certificate into `out`.
void roost_tls_describe(roost_tls *tls, char *out, size_t length);

/// A new server TLS connection (an OpenSSL bufferevent, handshake as the
/// server, no descriptor yet) with `tls`'s current context; aborts when
/// memory is exhausted (a TLS port must never fall back to plain).
struct bufferevent *roost_tls_bufferevent_new(struct event_base *base, roost_tls *tls);

#endif
