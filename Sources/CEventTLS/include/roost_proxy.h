#ifndef ROOST_PROXY_SHIM_H
#define ROOST_PROXY_SHIM_H

#include <stddef.h>

struct bufferevent;
struct event_base;
struct evhttp;

enum {
    /// The longest PROXY header read (v1 is at most 107 bytes; v2 is 16 plus
    /// its addresses and TLVs). Anything longer closes the connection.
    ROOST_PROXY_HEADER_MAX = 4096,
    /// Seconds a new connection has to send its whole PROXY header.
    ROOST_PROXY_HEADER_SECONDS = 5,
    /// Room for any client address `roost_proxy_parse` writes.
    ROOST_PROXY_CLIENT_MAX = 64,
};

/// Reads a PROXY protocol header (v1 text or v2 binary) at the start of `data`.
/// Returns the header's length when it is whole and valid, 0 when more bytes
/// are needed, -1 when it is not a valid header. On success `client` holds the
/// numeric source address, or "" when the header names none (v2 LOCAL, v1
/// UNKNOWN, an unspecified or Unix family): the connection's own peer stands.
int roost_proxy_parse(const unsigned char *data, size_t length, char *client, size_t client_length);

struct evhttp_connection;

/// What a PROXY listener asks of its owner; every call is on the loop thread.
typedef struct roost_proxy_hooks {
    /// Whether `peer` (the socket's numeric address) may send a PROXY header;
    /// a connection from any other peer is closed at its first bytes, unserved.
    int (*trusted)(const char *peer, void *arg);
    /// `connection`'s header named `client`.
    void (*found)(const void *connection, const char *client, void *arg);
    /// `connection` is gone (or its close callback was taken over: forget it).
    void (*closed)(const void *connection, void *arg);
    void *arg;
    /// evhttp's idle timeout, set again once the header is read.
    int idle_seconds;
} roost_proxy_hooks;

/// Tells this loop's hooks that `connection` is gone; for a owner that takes
/// over evhttp's close callback (a streamed response).
void roost_proxy_forget(struct evhttp_connection *connection);

/// Makes every connection `http` accepts from now on a plain HTTP connection
/// that starts with a PROXY header, read by the socket bufferevent's input
/// callback before evhttp sees a byte: a whole header is drained; a
/// malformed, too long or untrusted one ends the connection unserved; the
/// header's bytes may come at most ROOST_PROXY_HEADER_SECONDS apart.
/// `hooks` must outlive `http`.
void roost_http_use_proxy(struct evhttp *http, const roost_proxy_hooks *hooks);

#endif
