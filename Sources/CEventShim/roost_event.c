#include "roost_event.h"

#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>

enum {
    /* evbuffer_read's fixed cap in libevent 2.1 (EVBUFFER_MAX_READ). */
    LIBEVENT_READ_CAP = 4096,
    /* The most one extra read takes, so one connection cannot hog the loop. */
    LARGE_READ_MAX = 1 << 20,
};

/* Set while this thread's callback adds bytes, so that addition does not recurse. */
static __thread int adding;

void roost_read_more(struct bufferevent *bev, struct evbuffer *input, size_t n_added) {
    /* Fewer bytes than the cap means the socket was drained: nothing to do,
       and small requests pay no extra system call. */
    if (adding || n_added < LIBEVENT_READ_CAP) return;
    evutil_socket_t fd = bufferevent_getfd(bev);
    int pending = 0;
    if (fd < 0 || ioctl(fd, FIONREAD, &pending) != 0 || pending <= 0) return;
    size_t want = pending < LARGE_READ_MAX ? (size_t)pending : LARGE_READ_MAX;
    struct evbuffer_iovec vec;
    adding = 1;
    if (evbuffer_reserve_space(input, (ev_ssize_t)want, &vec, 1) == 1) {
        ssize_t n = recv(fd, vec.iov_base, want < vec.iov_len ? want : vec.iov_len, 0);
        /* On EOF or an error nothing is added; libevent's next read sees it again. */
        if (n > 0) {
            vec.iov_len = (size_t)n;
            evbuffer_commit_space(input, &vec, 1);
        }
    }
    adding = 0;
}
