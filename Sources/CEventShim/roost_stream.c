#include "roost_stream.h"

#include <errno.h>
#include <stdio.h>
#include <sys/types.h>
#include <sys/uio.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/http_struct.h>

enum {
    /* Below this, a remainder is copied into the output buffer: a reference is a chain of its own. */
    COPY_BELOW = 2048,
    /* Larger chunks go through the output buffer, which libevent sends 16 KiB
       a turn (as it always did): a client that stops reading meets a full
       buffer, and the stall clock, at once, not after the kernel took a
       large chunk in odd pieces. */
    DIRECT_MAX = 16384,
};

long roost_stream_send(struct evhttp_request *req, const void *data, size_t len, int direct,
                       roost_stream_release release, void *arg) {
    struct evhttp_connection *evcon = req->evcon;
    struct bufferevent *bev = evcon ? evhttp_connection_get_bufferevent(evcon) : NULL;
    if (bev == NULL || len == 0 || req->type == EVHTTP_REQ_HEAD) {
        release(data, len, arg);
        return bev == NULL ? -1 : 0;
    }
    struct evbuffer *output = bufferevent_get_output(bev);
    char head[24];
    size_t head_len = req->chunked ? (size_t)snprintf(head, sizeof head, "%zx\r\n", len) : 0;
    size_t tail_len = req->chunked ? 2 : 0;
    size_t written = 0;
    evutil_socket_t fd = bufferevent_getfd(bev);
    if (direct && fd >= 0 && len <= DIRECT_MAX && evbuffer_get_length(output) == 0) {
        struct iovec iov[3] = {{head, head_len}, {(void *)data, len}, {"\r\n", tail_len}};
        struct iovec *first = head_len ? iov : iov + 1;
        int count = head_len ? 3 : 1;
        ssize_t n;
        do { n = writev(fd, first, count); } while (n < 0 && errno == EINTR);
        /* EAGAIN, or an error libevent meets again on its own write and reports: all goes to the buffer. */
        if (n > 0) written = (size_t)n;
    }
    size_t at = written;
    if (at < head_len) evbuffer_add(output, head + at, head_len - at);
    at = at > head_len ? at - head_len : 0;
    if (at >= len) {
        release(data, len, arg);
    } else if (len - at < COPY_BELOW) {
        evbuffer_add(output, (const char *)data + at, len - at);
        release(data, len, arg);
    } else if (evbuffer_add_reference(output, (const char *)data + at, len - at, release, arg) != 0) {
        release(data, len, arg);
        return -1;
    }
    at = at > len ? at - len : 0;
    if (at < tail_len) evbuffer_add(output, "\r\n" + at, tail_len - at);
    /* Renews the read timeout (evhttp's idle limit for the stream), and
       the write event when bytes wait in the buffer. */
    bufferevent_enable(bev, written == head_len + len + tail_len ? EV_READ : EV_READ | EV_WRITE);
    return (long)written;
}
