#ifndef ROOST_STREAM_SHIM_H
#define ROOST_STREAM_SHIM_H

#include <stddef.h>

struct evhttp_request;

/// Frees what `roost_stream_send` was handed, once nothing refers to it any
/// more (the shape of libevent's `evbuffer_ref_cleanup_cb`).
typedef void (*roost_stream_release)(const void *data, size_t len, void *arg);

/// Sends `len` bytes of a streamed reply (after `evhttp_send_reply_start`) as
/// one chunk, framed when the reply is chunked, as `evhttp_send_reply_chunk`
/// does, but without its trip round the loop: when `direct` (a plain socket),
/// the chunk is at most 16 KiB and the connection's output buffer is empty,
/// it is written straight to the socket with one `writev`; what the socket
/// does not take, and every chunk otherwise, goes into the output buffer,
/// where libevent sends it (`data` by reference). Every call takes over `arg`: `release(arg)` runs
/// once nothing refers to `data` any more (at once when it was all written or copied).
/// Each call also renews the connection's read timeout, as evhttp's own does.
/// - Returns: the bytes written straight to the socket, or -1 when the
///   connection is gone (nothing sent).
long roost_stream_send(struct evhttp_request *req, const void *data, size_t len, int direct,
                       roost_stream_release release, void *arg);

#endif
