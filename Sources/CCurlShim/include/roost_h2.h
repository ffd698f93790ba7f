#ifndef ROOST_H2_H
#define ROOST_H2_H
// A long-lived HTTP/2 client for push providers (APNs, FCM): the requests of
// a batch go out as streams of one connection per origin (at most 1,000 in
// flight, fewer when the peer's SETTINGS say so), and the connections stay
// open between batches. Its own transport (nghttp2 + OpenSSL, ALPN h2, the
// server's name checked) carries them; libcurl's multi interface takes an
// origin whose server does not offer h2, or any request when a proxy is set
// in the environment (libcurl is loaded then, never at start-up). One client
// per thread. The process must ignore SIGPIPE (roostd does, in
// EventLoop.prepareProcess): OpenSSL writes to the socket with write().
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct roost_h2_client roost_h2_client;

typedef struct {
    /// "POST" (with body) or "GET".
    const char *method;
    /// https://host[:port]/path (http:// speaks HTTP/2 with prior knowledge).
    const char *url;
    /// "Name: value" strings.
    const char *const *headers;
    size_t header_count;
    const void *body;
    size_t body_len;
} roost_h2_request;

typedef struct {
    /// The HTTP status, or 0 when no response arrived.
    long status;
    /// Retry-After in seconds, or -1 when absent or not delta-seconds.
    long retry_after;
    /// The response body (malloc'd, at most 64 KiB kept; release with roost_h2_release).
    char *body;
    size_t body_len;
    /// The HTTP version the answer came in (2 for HTTP/2, 1 for 1.x, 0 unknown).
    int http_version;
    /// A transport failure (empty when a response arrived).
    char error[256];
} roost_h2_response;

/// A client that trusts `ca_file` (a PEM bundle) when not NULL or empty,
/// else the system's CAs. NULL with the reason in `err` when libcurl cannot be loaded.
roost_h2_client *roost_h2_new(const char *ca_file, char *err, size_t errlen);

/// Closes the client's connections and frees it.
void roost_h2_free(roost_h2_client *client);

/// Performs `n` requests together, waiting at most `timeout_ms` for all of
/// them; fills `out[i]` for `req[i]`. Returns 0, or -1 when the batch could
/// not start (every out[i].error says why).
int roost_h2_perform(roost_h2_client *client, const roost_h2_request *req, roost_h2_response *out, size_t n, long timeout_ms);

/// Connections the client opened so far (new TLS handshakes, not reuses).
long roost_h2_connections(const roost_h2_client *client);

/// How long the client's loops work between two `sched_yield` calls, in nanoseconds
/// (Swift's `GiveWay.stretchNanoseconds`; 50 µs until set). For every client of the process.
void roost_h2_set_give_way(long nanoseconds);

/// Frees out[i].body for every i.
void roost_h2_release(roost_h2_response *out, size_t n);

#ifdef __cplusplus
}
#endif
#endif
