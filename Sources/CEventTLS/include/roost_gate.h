#ifndef ROOST_GATE_H
#define ROOST_GATE_H

#include <stddef.h>

struct evhttp;
struct evhttp_connection;
typedef struct roost_tls roost_tls;

/// What every connection's gate asks of its owner; every call is on the loop thread.
typedef struct roost_gate_hooks {
    /// Whether `peer` (the socket's numeric address) may send a PROXY header;
    /// on a PROXY front a connection from any other peer is closed at its first bytes.
    int (*trusted)(const char *peer, void *arg);
    /// Whether `peer` may hold more than `max_per_address` connections (a trusted proxy).
    int (*exempt)(const char *peer, void *arg);
    /// `connection`'s PROXY header named `client`.
    void (*found)(const void *connection, const char *client, void *arg);
    /// `connection` is gone (called once for every connection).
    void (*closed)(const void *connection, void *arg);
    void *arg;
    /// evhttp's idle timeout, set again once a request head is whole.
    int idle_seconds;
    /// Seconds a request head (and a PROXY header before it) may take from its first byte.
    int header_seconds;
    /// Open connections one socket peer address may hold (all loops together); 0: no limit.
    int max_per_address;
} roost_gate_hooks;

enum {
    ROOST_GATE_PLAIN = 0,
    ROOST_GATE_TLS = 1,
    ROOST_GATE_PROXY = 2,
    /// The longest request head (request line and header fields) read.
    ROOST_GATE_HEAD_MAX = 64 * 1024,
};

/// Makes every connection `http` accepts from now on pass through a gate on
/// its socket bufferevent's input (a plain socket, TLS with `tls`, or a plain
/// socket that starts with a PROXY header), which sees the bytes before evhttp:
///
/// - a request head reaches evhttp only whole and strict (RFC 9112): CRLF line
///   ends, an origin-form target (`/…`, not `//…`), HTTP/1.0 or 1.1, field names
///   that are tokens directly followed by `:`, no folded lines, no control
///   characters in values, at most one Content-Length (digits only), at most one
///   Transfer-Encoding (exactly `chunked`) and never both. (After a chunked
///   body, or the body of a HEAD or TRACE, which evhttp never reads, no further
///   head is read: the server's reply closes the connection.) Any other head is replaced by a request evhttp hands to the server
///   as `OPTIONS *` with `Connection: close` and `X-Roost-Refused: <status> <reason>`
///   (the gate refuses every real `*` target, so only the gate makes one);
/// - a head must be whole within `header_seconds` of its first byte, or the
///   connection is closed;
/// - a connection beyond `max_per_address` for its socket peer is closed unserved.
///
/// `hooks` must outlive `http`.
void roost_http_use_gate(struct evhttp *http, const roost_gate_hooks *hooks, int kind, roost_tls *tls);

#endif
