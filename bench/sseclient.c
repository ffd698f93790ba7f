/* A load client for Server-Sent Event streams (bench/live.py drives it): holds N streams
 * to one server on 127.0.0.1 in one epoll thread, decodes chunked replies, and for every
 * `data:` line carrying a writer's timestamp ("t": microseconds since the epoch, CLOCK_REALTIME)
 * records now - t. One thread and no allocation per event, so that it is not the bottleneck:
 * its own CPU time is in every report, to check.
 *
 *   gcc -O2 -o bench/out/sseclient bench/sseclient.c bench/sseclient_stats.c
 *   sseclient PORT PATH N [pb]
 *
 * PATH is the stream's request path (roostd: /items/_live; PocketBase: /api/realtime). With
 * "pb", each stream's PB_CONNECT clientId is printed as "CID <clientId>" for the driver to
 * subscribe it (POST /api/realtime).
 * Prints "READY <open>" once all N answered (or "READY <open> failed=<k>" after 120 s).
 * Commands on stdin, one a line:
 *   RESET   forget the events counted so far (start of a measured window)
 *   REPORT  print one line: REPORT events=.. lat_p50_us=.. lat_p90_us=.. lat_p99_us=.. lat_max_us=..
 *           per_conn_min=.. per_conn_max=.. first_ms=.. last_ms=.. open=.. closed=.. cpu_s=.. heartbeats=..
 *   COUNT   print "COUNT events=.. open=.. closed=.. cpu_s=.." (cheap: no sorting)
 *   QUIT    close everything and exit
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "sseclient.h"

Conn *conns;
int nconns, n_open, n_closed;
long heartbeats;
uint32_t *lats;
size_t nlat;
double first_ms, last_ms;
static int pb_mode, epfd, port;
static const char *path;
static int n_ready, n_failed, n_started;
static size_t lat_cap;

static double now_mono_ms(void) {
    struct timespec ts; clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}
static double now_real_us(void) {
    struct timespec ts; clock_gettime(CLOCK_REALTIME, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static void close_conn(Conn *c) {
    if (c->state == ST_CLOSED) return;
    if (c->fd >= 0) { epoll_ctl(epfd, EPOLL_CTL_DEL, c->fd, NULL); close(c->fd); }
    if (c->got_ready) n_open--;
    else n_failed++;
    c->fd = -1; c->state = ST_CLOSED; n_closed++;
}

static void start_conn(Conn *c) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) { perror("socket"); exit(1); }
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int one = 1; setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    c->fd = fd; c->state = ST_CONNECTING;
    n_started++;
    if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0 && errno != EINPROGRESS) {
        close(fd); c->fd = -1; c->state = ST_CLOSED; n_failed++; n_closed++; return;
    }
    struct epoll_event ev = { .events = EPOLLOUT | EPOLLIN, .data.ptr = c };
    epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev);
}

static void mark_ready(Conn *c) {
    if (c->got_ready) return;
    c->got_ready = 1; n_ready++; n_open++;
}

static void on_data_line(Conn *c, const char *s, size_t n) {
    if (pb_mode && !c->got_ready) {
        const char *k = memmem(s, n, "\"clientId\":\"", 12);
        if (k) {
            k += 12;
            const char *e = memchr(k, '"', n - (k - s));
            if (e) { printf("CID %.*s\n", (int)(e - k), k); fflush(stdout); mark_ready(c); }
        }
        return;
    }
    const char *k = memmem(s, n, "\"t\":", 4);
    if (!k) return;
    double t = strtod(k + 4, NULL);
    double lat = now_real_us() - t;
    if (lat < 0) lat = 0;
    if (nlat == lat_cap) {
        lat_cap = lat_cap ? lat_cap * 2 : (1 << 20);
        lats = realloc(lats, lat_cap * sizeof *lats);
        if (!lats) { perror("realloc"); exit(1); }
    }
    lats[nlat++] = lat > 4e9 ? 4000000000u : (uint32_t)lat;
    double m = now_mono_ms();
    if (first_ms == 0) first_ms = m;
    last_ms = m;
    c->events++;
}

/* Decoded body bytes: split into SSE lines. */
static void feed_body(Conn *c, const char *p, size_t n) {
    while (n > 0) {
        const char *nl = memchr(p, '\n', n);
        size_t take = nl ? (size_t)(nl - p) : n;
        const char *line = p; size_t len = take;
        if (c->line_len || !nl) {
            if (c->line_len + take + 1 > c->line_cap) {
                c->line_cap = (c->line_len + take + 1) * 2;
                c->line = realloc(c->line, c->line_cap);
            }
            memcpy(c->line + c->line_len, p, take);
            c->line_len += take;
            line = c->line; len = c->line_len;
        }
        if (!nl) return;
        if (len && line[len - 1] == '\r') len--;
        if (len >= 5 && memcmp(line, "data:", 5) == 0) on_data_line(c, line + 5, len - 5);
        else if (len >= 1 && line[0] == ':') heartbeats++;
        c->line_len = 0;
        p += take + 1; n -= take + 1;
    }
}

static void feed_chunked(Conn *c, const char *p, size_t n) {
    while (n > 0) {
        if (c->ch_state == CH_SIZE) {
            char ch = *p++; n--;
            if (ch == '\n') {
                c->sizebuf[c->size_len] = 0;
                c->ch_left = strtol(c->sizebuf, NULL, 16);
                c->size_len = 0;
                if (c->ch_left == 0) { close_conn(c); return; }  /* last chunk: the stream ended */
                c->ch_state = CH_DATA;
            } else if (ch != '\r' && c->size_len < sizeof c->sizebuf - 1) c->sizebuf[c->size_len++] = ch;
        } else if (c->ch_state == CH_DATA) {
            size_t take = (size_t)c->ch_left < n ? (size_t)c->ch_left : n;
            feed_body(c, p, take);
            p += take; n -= take; c->ch_left -= take;
            if (c->ch_left == 0) c->ch_state = CH_CRLF;
        } else {  /* CRLF after the data */
            char ch = *p++; n--;
            if (ch == '\n') c->ch_state = CH_SIZE;
        }
    }
}

static void on_readable(Conn *c) {
    static char buf[1 << 16];
    for (;;) {
        ssize_t r = read(c->fd, buf, sizeof buf);
        if (r == 0) { close_conn(c); return; }
        if (r < 0) { if (errno == EAGAIN || errno == EINTR) return; close_conn(c); return; }
        const char *p = buf; size_t n = r;
        if (c->state == ST_HEAD) {
            size_t room = sizeof c->head - 1 - c->head_len;
            size_t take = n < room ? n : room;
            memcpy(c->head + c->head_len, p, take);
            c->head_len += take; c->head[c->head_len] = 0;
            char *end = strstr(c->head, "\r\n\r\n");
            if (!end) { if (c->head_len >= sizeof c->head - 1) close_conn(c); continue; }
            size_t head_bytes = end + 4 - c->head;
            if (strncmp(c->head, "HTTP/1.1 200", 12) != 0 && strncmp(c->head, "HTTP/1.0 200", 12) != 0) {
                static int shown;
                if (shown++ < 3) fprintf(stderr, "sseclient: %.*s\n", (int)(strcspn(c->head, "\r")), c->head);
                close_conn(c); return;
            }
            c->chunked = strcasestr(c->head, "transfer-encoding: chunked") != NULL;
            c->state = ST_BODY;
            if (!pb_mode) mark_ready(c);
            size_t rest = c->head_len - head_bytes;  /* body bytes that came with the head */
            p = buf + (take - rest); n = rest + (n - take);
        }
        if (n) {
            if (c->chunked) feed_chunked(c, p, n); else feed_body(c, p, n);
            if (c->state == ST_CLOSED) return;
        }
    }
}

int main(int argc, char **argv) {
    if (argc < 4) { fprintf(stderr, "usage: sseclient PORT PATH N [pb]\n"); return 2; }
    port = atoi(argv[1]); path = argv[2]; nconns = atoi(argv[3]);
    pb_mode = argc > 4 && strcmp(argv[4], "pb") == 0;
    struct rlimit rl; getrlimit(RLIMIT_NOFILE, &rl);
    if (rl.rlim_cur < (rlim_t)nconns + 64) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    conns = calloc(nconns, sizeof *conns);
    epfd = epoll_create1(0);
    fcntl(0, F_SETFL, fcntl(0, F_GETFL) | O_NONBLOCK);
    struct epoll_event sev = { .events = EPOLLIN, .data.ptr = NULL };
    epoll_ctl(epfd, EPOLL_CTL_ADD, 0, &sev);
    char request[1024];
    int reqlen = snprintf(request, sizeof request,
        "GET %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nAccept: text/event-stream\r\nCache-Control: no-cache\r\n\r\n", path, port);
    int next = 0, announced = 0;
    double started = now_mono_ms();
    char cmd[256]; size_t cmd_len = 0;
    struct epoll_event evs[512];
    for (;;) {
        /* at most 256 streams between connect and their first answer */
        while (next < nconns && (n_started - n_ready - n_failed) < 256) start_conn(&conns[next++]);
        if (!announced && (n_ready + n_failed >= nconns || now_mono_ms() - started > 120000)) {
            announced = 1;
            printf("READY %d failed=%d\n", n_ready, nconns - n_ready);
            fflush(stdout);
        }
        int k = epoll_wait(epfd, evs, 512, 200);
        for (int i = 0; i < k; i++) {
            Conn *c = evs[i].data.ptr;
            if (!c) {
                char b[256];
                ssize_t r;
                while ((r = read(0, b, sizeof b)) > 0) {
                    for (ssize_t j = 0; j < r; j++) {
                        if (b[j] != '\n') { if (cmd_len < sizeof cmd - 1) cmd[cmd_len++] = b[j]; continue; }
                        cmd[cmd_len] = 0; cmd_len = 0;
                        if (!strcmp(cmd, "RESET")) reset();
                        else if (!strcmp(cmd, "REPORT")) report();
                        else if (!strcmp(cmd, "COUNT")) count();
                        else if (!strcmp(cmd, "QUIT")) goto quit;
                    }
                }
                if (r == 0) goto quit;  /* the driver went away */
                continue;
            }
            if (c->state == ST_CLOSED) continue;
            if (c->state == ST_CONNECTING && (evs[i].events & EPOLLOUT)) {
                int err = 0; socklen_t l = sizeof err;
                getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &l);
                if (err) { close_conn(c); continue; }
                if (write(c->fd, request, reqlen) != reqlen) { close_conn(c); continue; }
                c->state = ST_HEAD;
                struct epoll_event ev = { .events = EPOLLIN, .data.ptr = c };
                epoll_ctl(epfd, EPOLL_CTL_MOD, c->fd, &ev);
                continue;
            }
            if (evs[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) on_readable(c);
        }
    }
quit:
    for (int i = 0; i < nconns; i++) if (conns[i].fd >= 0) close(conns[i].fd);
    return 0;
}
