#ifndef ROOST_PROXY_SHIM_H
#define ROOST_PROXY_SHIM_H

#include <stddef.h>

enum {
    /// The longest PROXY header read (v1 is at most 107 bytes; v2 is 16 plus
    /// its addresses and TLVs). Anything longer closes the connection.
    ROOST_PROXY_HEADER_MAX = 4096,
    /// Room for any client address `roost_proxy_parse` writes.
    ROOST_PROXY_CLIENT_MAX = 64,
};

/// Reads a PROXY protocol header (v1 text or v2 binary) at the start of `data`.
/// Returns the header's length when it is whole and valid, 0 when more bytes
/// are needed, -1 when it is not a valid header. On success `client` holds the
/// numeric source address, or "" when the header names none (v2 LOCAL, v1
/// UNKNOWN, an unspecified or Unix family): the connection's own peer stands.
int roost_proxy_parse(const unsigned char *data, size_t length, char *client, size_t client_length);

#endif
