// The push client's HTTP/2 transport on nghttp2 and OpenSSL (see roost_h2_direct.h).
//
// One connection per origin, kept between batches. A batch is a loop on this
// thread: nghttp2 frames the requests (HPACK, flow control, the peer's
// concurrent-stream limit), OpenSSL encrypts them, poll() waits on the
// batch's connections only. Each wake-up costs the bytes that arrived, not a
// walk over every stream in flight (libcurl 7.88's multi interface did that,
// and spent a third of the push thread in it).
#include "roost_h2_direct.h"
#include "curl_api.h"
#include <nghttp2/nghttp2.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define BODY_MAX (64 * 1024)
#define ORIGINS_MAX 8
/// Streams of one connection this client opens at once (the peer's
/// SETTINGS_MAX_CONCURRENT_STREAMS lowers it; APNs allows 1,000).
#define IN_FLIGHT_MAX 1000
/// Bytes gathered from nghttp2 before one TLS write.
#define WRITE_CHUNK (64 * 1024)
/// Bytes read per wake-up before the loop looks at its deadline again.
#define READ_BUDGET (256 * 1024)
/// The longest one address may take to connect, and one origin to connect and shake hands.
#define CONNECT_MS 2000
#define OPEN_MS 4000
/// A connection idle this long is asked for a PING answer before it is used again.
#define IDLE_CHECK_MS 15000
/// How long a failed origin is not tried again (doubling per failure up to the longest).
#define RETRY_FIRST_MS 1000
#define RETRY_LONGEST_MS 60000
/// An origin that did not offer h2 is asked again after this long.
#define DECLINED_MS 600000
/// Stream ids left before a connection is retired (they end at 2^31 - 1).
#define STREAM_IDS_SPARE 100000

/// One request of a batch on its way.
struct stream {
    const roost_h2_request *req;
    roost_h2_response *out;
    struct origin *origin;
    size_t body_sent;
    int answered;   // a final :status arrived
    int ended;      // the response's END_STREAM arrived
    int done;       // closed (answered or failed)
    int unsent;     // never sent, refused (REFUSED_STREAM), or lost with a reused connection: may go again
};

/// A scheme, host and port, its connection, and what the batch queued on it.
struct origin {
    char *host;
    int port;
    int tls;
    long declined_until; // ALPN did not give h2: libcurl sends to this origin until then (ms)
    long retry_after;    // a connection failed: not tried again before this time (ms)
    int failures;        // connection failures in a row
    char last_failure[256];
    // The connection (fd < 0: none).
    int fd;
    SSL *ssl;
    nghttp2_session *session;
    int broken;      // an I/O or protocol error: closed at the end of the round
    int goaway;      // the peer is closing the connection: no new streams on it
    int from_earlier_batch;
    int round_state; // this round: 0 not yet seen, 1 sending, 2 failed or declined
    int read_wants_write, write_wants_read; // TLS needs the other direction first
    int ping_acked;
    long last_read;  // when bytes last arrived (ms)
    unsigned char *pending;   // framed bytes not yet written
    size_t pending_cap, pending_len, pending_off;
    // This round's queue.
    struct stream **queue;
    size_t queue_cap, queued, next, in_flight;
};

struct roost_h2_direct {
    SSL_CTX *ctx;
    struct origin origins[ORIGINS_MAX];
    size_t origin_count;
    long connections;
};

static long now_ms(void);

/// Whether libcurl takes this origin now (it did not offer h2 a while ago).
static int is_declined(const struct origin *o) { return o->declined_until > now_ms(); }

static long now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/// The longest stretch of work between two yields (ns): Swift's `GiveWay.stretchNanoseconds`,
/// which `HTTP2Client` sets through roost_h2_set_give_way.
static _Atomic long give_way_ns = 50000;

void roost_h2_set_give_way(long nanoseconds) { atomic_store_explicit(&give_way_ns, nanoseconds, memory_order_relaxed); }

/// Called between pieces of framing, encrypting and reading: yields the CPU once `give_way_ns`
/// of work have passed since this thread last did, so that a request thread woken on this CPU
/// does not wait for the scheduler's tick (Swift's `GiveWay`, docs/PUSH.md).
static void give_way(void) {
    static __thread struct timespec since;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    long elapsed = (now.tv_sec - since.tv_sec) * 1000000000L + (now.tv_nsec - since.tv_nsec);
    if (elapsed < atomic_load_explicit(&give_way_ns, memory_order_relaxed)) return;
    sched_yield();
    clock_gettime(CLOCK_MONOTONIC, &since);
}

static void set_error(roost_h2_response *out, const char *fmt, const char *detail) {
    snprintf(out->error, sizeof out->error, fmt, detail ? detail : "");
}

/// OpenSSL's last error as text (empty when none).
static const char *tls_reason(void) {
    static __thread char buf[160];
    unsigned long e = ERR_get_error();
    if (!e) return "";
    ERR_error_string_n(e, buf, sizeof buf);
    ERR_clear_error();
    return buf;
}

roost_h2_direct *roost_h2_direct_new(const char *ca_file, char *err, size_t errlen) {
    roost_h2_direct *d = calloc(1, sizeof *d);
    if (!d) { snprintf(err, errlen, "out of memory"); return NULL; }
    d->ctx = SSL_CTX_new(TLS_client_method());
    if (!d->ctx) { snprintf(err, errlen, "SSL_CTX_new failed: %s", tls_reason()); free(d); return NULL; }
    SSL_CTX_set_min_proto_version(d->ctx, TLS1_2_VERSION);
    SSL_CTX_set_verify(d->ctx, SSL_VERIFY_PEER, NULL);
    SSL_CTX_set_mode(d->ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER | SSL_MODE_RELEASE_BUFFERS);
    static const unsigned char alpn[] = {2, 'h', '2'};
    SSL_CTX_set_alpn_protos(d->ctx, alpn, sizeof alpn);
    int loaded = (ca_file && ca_file[0]) ? SSL_CTX_load_verify_locations(d->ctx, ca_file, NULL)
                                         : SSL_CTX_set_default_verify_paths(d->ctx);
    if (loaded != 1) {
        snprintf(err, errlen, "cannot load the CA certificates%s%s: %s", ca_file && ca_file[0] ? " in " : "",
                 ca_file && ca_file[0] ? ca_file : "", tls_reason());
        SSL_CTX_free(d->ctx);
        free(d);
        return NULL;
    }
    return d;
}

static void close_connection(struct origin *o) {
    if (o->session) { nghttp2_session_del(o->session); o->session = NULL; }
    if (o->ssl) { SSL_free(o->ssl); o->ssl = NULL; }
    if (o->fd >= 0) { close(o->fd); o->fd = -1; }
    free(o->pending);
    o->pending = NULL;
    o->pending_cap = o->pending_len = o->pending_off = 0;
    o->broken = 0;
    o->goaway = 0;
    o->from_earlier_batch = 0;
}

void roost_h2_direct_free(roost_h2_direct *d) {
    if (!d) return;
    for (size_t i = 0; i < d->origin_count; i++) {
        close_connection(&d->origins[i]);
        free(d->origins[i].host);
        free(d->origins[i].queue);
    }
    SSL_CTX_free(d->ctx);
    free(d);
}

long roost_h2_direct_connections(const roost_h2_direct *d) { return d ? d->connections : 0; }

/// "https://host[:port]/path" split; 0 when the URL is one this transport sends.
static int split_url(const char *url, char *host, size_t host_len, int *port, int *tls, const char **path) {
    const char *rest;
    if (strncmp(url, "https://", 8) == 0) { *tls = 1; *port = 443; rest = url + 8; }
    else if (strncmp(url, "http://", 7) == 0) { *tls = 0; *port = 80; rest = url + 7; }
    else return -1;
    const char *end = rest + strcspn(rest, "/?#");
    const char *at = memchr(rest, '@', (size_t)(end - rest));
    if (at) return -1;  // credentials in the URL: libcurl's business
    const char *h = rest, *h_end, *colon;
    if (*h == '[') {
        h_end = memchr(h, ']', (size_t)(end - h));
        if (!h_end) return -1;
        h++;
        colon = (h_end + 1 < end && h_end[1] == ':') ? h_end + 1 : NULL;
    } else {
        colon = memchr(h, ':', (size_t)(end - h));
        h_end = colon ? colon : end;
    }
    size_t len = (size_t)(h_end - h);
    if (len == 0 || len >= host_len) return -1;
    memcpy(host, h, len);
    host[len] = 0;
    if (colon) {
        char *stop;
        long p = strtol(colon + 1, &stop, 10);
        if (stop != end || p <= 0 || p > 65535) return -1;
        *port = (int)p;
    }
    *path = *end == '/' ? end : NULL;
    return *path ? 0 : -1;
}

/// A proxy in the environment for this scheme: libcurl honours it, this transport does not.
static int proxy_configured(int tls) {
    const char *names[] = {tls ? "https_proxy" : "http_proxy", tls ? "HTTPS_PROXY" : NULL, "all_proxy", "ALL_PROXY"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        const char *v = names[i] ? getenv(names[i]) : NULL;
        if (v && v[0]) return 1;
    }
    return 0;
}

static struct origin *find_origin(roost_h2_direct *d, const char *host, int port, int tls) {
    for (size_t i = 0; i < d->origin_count; i++) {
        struct origin *o = &d->origins[i];
        if (o->port == port && o->tls == tls && strcasecmp(o->host, host) == 0) return o;
    }
    if (d->origin_count == ORIGINS_MAX) return NULL;
    struct origin *o = &d->origins[d->origin_count];
    memset(o, 0, sizeof *o);
    o->host = strdup(host);
    if (!o->host) return NULL;
    o->port = port;
    o->tls = tls;
    o->fd = -1;
    d->origin_count++;
    return o;
}

// MARK: nghttp2 callbacks (the session's user data is the origin, a stream's is its `struct stream`)

static int on_header(nghttp2_session *session, const nghttp2_frame *frame, const uint8_t *name, size_t namelen,
                     const uint8_t *value, size_t valuelen, uint8_t flags, void *user_data) {
    (void)flags; (void)user_data;
    if (frame->hd.type != NGHTTP2_HEADERS) return 0;
    struct stream *s = nghttp2_session_get_stream_user_data(session, frame->hd.stream_id);
    if (!s) return 0;
    if (namelen == 7 && memcmp(name, ":status", 7) == 0) {
        long status = 0;
        for (size_t i = 0; i < valuelen && i < 3; i++) status = status * 10 + (value[i] - '0');
        if (status >= 200) { s->out->status = status; s->answered = 1; }
    } else if (namelen == 11 && memcmp(name, "retry-after", 11) == 0) {
        char line[64];
        int len = snprintf(line, sizeof line, "retry-after: %.*s", (int)(valuelen < 40 ? valuelen : 40), (const char *)value);
        long seconds = roost_curl_retry_after(line, (size_t)len);
        if (seconds >= 0) s->out->retry_after = seconds;
    }
    return 0;
}

static int on_data(nghttp2_session *session, uint8_t flags, int32_t stream_id, const uint8_t *data, size_t len, void *user_data) {
    (void)flags; (void)user_data;
    struct stream *s = nghttp2_session_get_stream_user_data(session, stream_id);
    if (!s) return 0;
    roost_h2_response *out = s->out;
    size_t room = out->body_len < BODY_MAX ? BODY_MAX - out->body_len : 0;
    size_t take = len < room ? len : room;
    if (take == 0) return 0;
    char *grown = realloc(out->body, out->body_len + take + 1);
    if (!grown) return NGHTTP2_ERR_CALLBACK_FAILURE;
    memcpy(grown + out->body_len, data, take);
    out->body = grown;
    out->body_len += take;
    out->body[out->body_len] = 0;
    return 0;
}

static int on_close(nghttp2_session *session, int32_t stream_id, uint32_t error_code, void *user_data) {
    struct origin *o = user_data;
    struct stream *s = nghttp2_session_get_stream_user_data(session, stream_id);
    if (!s || s->done) return 0;
    s->done = 1;
    if (o->in_flight > 0) o->in_flight--;
    // A complete answer, perhaps followed by RST_STREAM(NO_ERROR) (RFC 9113 §8.1).
    if (s->answered && s->ended) return 0;
    if (!s->answered && error_code == NGHTTP2_REFUSED_STREAM) s->unsent = 1;  // the peer did not process it
    s->out->status = 0;
    set_error(s->out, "HTTP/2 stream closed: %s", nghttp2_http2_strerror(error_code));
    return 0;
}

static ssize_t read_body(nghttp2_session *session, int32_t stream_id, uint8_t *buf, size_t length, uint32_t *data_flags,
                         nghttp2_data_source *source, void *user_data) {
    (void)session; (void)stream_id; (void)user_data;
    struct stream *s = source->ptr;
    size_t left = s->req->body_len - s->body_sent;
    size_t take = left < length ? left : length;
    if (take) memcpy(buf, (const char *)s->req->body + s->body_sent, take);
    s->body_sent += take;
    if (s->body_sent == s->req->body_len) *data_flags |= NGHTTP2_DATA_FLAG_EOF;
    return (ssize_t)take;
}

static int on_frame(nghttp2_session *session, const nghttp2_frame *frame, void *user_data) {
    struct origin *o = user_data;
    if (frame->hd.type == NGHTTP2_GOAWAY) o->goaway = 1;
    if (frame->hd.type == NGHTTP2_PING && (frame->hd.flags & NGHTTP2_FLAG_ACK)) o->ping_acked = 1;
    if ((frame->hd.type == NGHTTP2_HEADERS || frame->hd.type == NGHTTP2_DATA) && (frame->hd.flags & NGHTTP2_FLAG_END_STREAM)) {
        struct stream *s = nghttp2_session_get_stream_user_data(session, frame->hd.stream_id);
        if (s) s->ended = 1;
    }
    return 0;
}

static nghttp2_session_callbacks *shared_callbacks;

static void make_callbacks(void) {
    nghttp2_session_callbacks_new(&shared_callbacks);
    nghttp2_session_callbacks_set_on_header_callback(shared_callbacks, on_header);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(shared_callbacks, on_data);
    nghttp2_session_callbacks_set_on_stream_close_callback(shared_callbacks, on_close);
    nghttp2_session_callbacks_set_on_frame_recv_callback(shared_callbacks, on_frame);
}

/// The callbacks every session shares (made once per process).
static nghttp2_session_callbacks *callbacks(void) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, make_callbacks);
    return shared_callbacks;
}

// MARK: connections

/// Waits until `fd` is ready for `events` or the deadline: 1 ready, 0 timed out, -1 error.
static int wait_fd(int fd, short events, long deadline) {
    for (;;) {
        long left = deadline - now_ms();
        if (left <= 0) return 0;
        struct pollfd p = {.fd = fd, .events = events};
        int r = poll(&p, 1, (int)(left > 1000 ? 1000 : left));
        if (r == 0) continue;
        if (r < 0 && errno == EINTR) continue;
        return r < 0 ? -1 : r;
    }
}

/// A non-blocking TCP connection to host:port, or -1 with the reason in `out`.
static int connect_tcp(const struct origin *o, long deadline, roost_h2_response *out) {
    char port[8];
    snprintf(port, sizeof port, "%d", o->port);
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *list = NULL;
    int rc = getaddrinfo(o->host, port, &hints, &list);
    if (rc != 0) { set_error(out, "could not resolve host: %s", gai_strerror(rc)); return -1; }
    int fd = -1, last = 0;
    for (struct addrinfo *a = list; a && fd < 0; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0) { last = errno; continue; }
        if (connect(fd, a->ai_addr, a->ai_addrlen) != 0 && errno != EINPROGRESS) { last = errno; close(fd); fd = -1; continue; }
        long until = now_ms() + CONNECT_MS;
        int ready = wait_fd(fd, POLLOUT, until < deadline ? until : deadline), soerr = 0;
        socklen_t sl = sizeof soerr;
        if (ready == 1) getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl);
        if (ready != 1 || soerr) { last = ready == 0 ? ETIMEDOUT : soerr ? soerr : errno; close(fd); fd = -1; }
    }
    freeaddrinfo(list);
    if (fd < 0) { set_error(out, "could not connect: %s", strerror(last)); return -1; }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

/// The TLS handshake with the origin's name checked; 0, 1 when the peer did
/// not choose h2 (libcurl takes the origin), -1 with the reason in `out`.
static int handshake(roost_h2_direct *d, struct origin *o, long deadline, roost_h2_response *out) {
    o->ssl = SSL_new(d->ctx);
    if (!o->ssl) { set_error(out, "SSL_new failed: %s", tls_reason()); return -1; }
    SSL_set_fd(o->ssl, o->fd);
    unsigned char ip[16];
    int literal = inet_pton(AF_INET, o->host, ip) == 1 || inet_pton(AF_INET6, o->host, ip) == 1;
    if (literal) {
        X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(o->ssl), o->host);
    } else {
        SSL_set_tlsext_host_name(o->ssl, o->host);
        SSL_set1_host(o->ssl, o->host);
    }
    for (;;) {
        ERR_clear_error();  // SSL_get_error reads the thread's queue: only this call's errors may be in it
        int r = SSL_connect(o->ssl);
        if (r == 1) break;
        int e = SSL_get_error(o->ssl, r);
        if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
            int ready = wait_fd(o->fd, e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, deadline);
            if (ready == 1) continue;
            set_error(out, "TLS handshake %s", ready == 0 ? "timed out" : "failed");
            return -1;
        }
        long verify = SSL_get_verify_result(o->ssl);
        if (verify != X509_V_OK) set_error(out, "TLS certificate not trusted: %s", X509_verify_cert_error_string(verify));
        else set_error(out, "TLS handshake failed: %s", tls_reason());
        ERR_clear_error();  // the thread's queue stays empty for its other OpenSSL calls (JWT signing)
        return -1;
    }
    const unsigned char *proto = NULL;
    unsigned int proto_len = 0;
    SSL_get0_alpn_selected(o->ssl, &proto, &proto_len);
    return proto_len == 2 && memcmp(proto, "h2", 2) == 0 ? 0 : 1;
}

/// Opens the origin's connection: 0, 1 when libcurl must take the origin, -1 with the reason in `out`.
static int open_connection(roost_h2_direct *d, struct origin *o, long deadline, roost_h2_response *out) {
    // One origin may take at most OPEN_MS of the batch: the others' streams wait meanwhile.
    long until = now_ms() + OPEN_MS;
    if (until < deadline) deadline = until;
    o->fd = connect_tcp(o, deadline, out);
    int r = o->fd < 0 ? -1 : o->tls ? handshake(d, o, deadline, out) : 0;
    if (r == 0) {
        // Until the server's SETTINGS arrive, one stream at a time: a server with a
        // lower limit than ours (APNs lowers it after a refusal) would reset the rest.
        nghttp2_option *option = NULL;
        if (nghttp2_option_new(&option) == 0) nghttp2_option_set_peer_max_concurrent_streams(option, 1);
        if (nghttp2_session_client_new2(&o->session, callbacks(), o, option) != 0) {
            set_error(out, "nghttp2_session_client_new failed%s", NULL);
            r = -1;
        }
        nghttp2_option_del(option);
    }
    if (r != 0) {
        close_connection(o);
        if (r == 1) {
            o->declined_until = now_ms() + DECLINED_MS;
        } else {
            // Not tried again for a while (doubling): a batch with other origins does not wait on it each time.
            long wait = RETRY_FIRST_MS << (o->failures < 6 ? o->failures : 6);
            o->retry_after = now_ms() + (wait < RETRY_LONGEST_MS ? wait : RETRY_LONGEST_MS);
            o->failures++;
            snprintf(o->last_failure, sizeof o->last_failure, "%.200s", out->error);
        }
        return r;
    }
    o->failures = 0;
    o->last_read = now_ms();
    nghttp2_settings_entry settings[] = {
        {NGHTTP2_SETTINGS_ENABLE_PUSH, 0},
        {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, 1 << 20},
    };
    nghttp2_submit_settings(o->session, NGHTTP2_FLAG_NONE, settings, 2);
    d->connections++;
    return 0;
}

/// One read or write on the connection, TLS or plain: the bytes moved, 0 when
/// it would block (noting which direction TLS needs first), -1 when the
/// connection is done for (a closed peer included).
static ssize_t move_bytes(struct origin *o, void *buf, size_t len, int writing) {
    if (!o->ssl) {
        ssize_t n = writing ? send(o->fd, buf, len, MSG_NOSIGNAL) : recv(o->fd, buf, len, 0);
        if (n > 0) return n;
        if (n == 0) return -1;
        return (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) ? 0 : -1;
    }
    ERR_clear_error();  // SSL_get_error reads the thread's queue: only this call's errors may be in it
    int chunk = (int)(len > 1 << 30 ? 1 << 30 : len);
    int n = writing ? SSL_write(o->ssl, buf, chunk) : SSL_read(o->ssl, buf, chunk);
    int e = n > 0 ? SSL_ERROR_NONE : SSL_get_error(o->ssl, n);
    if (writing) o->write_wants_read = e == SSL_ERROR_WANT_READ;
    else o->read_wants_write = e == SSL_ERROR_WANT_WRITE;
    if (n > 0) return n;
    if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) return 0;
    ERR_clear_error();
    return -1;
}

/// Reads what arrived and feeds it to nghttp2: 0, or -1 when the connection is done for.
static int read_in(struct origin *o) {
    unsigned char buf[16384];
    for (size_t taken = 0; taken < READ_BUDGET;) {
        give_way();
        ssize_t got = move_bytes(o, buf, sizeof buf, 0);
        if (got <= 0) return (int)got;
        o->last_read = now_ms();
        taken += (size_t)got;
        if (nghttp2_session_mem_recv(o->session, buf, (size_t)got) < 0) return -1;
    }
    return 0;  // more may be waiting: the loop comes back after checking its deadline
}

/// Writes what nghttp2 has framed, gathered into few TLS records: 0, or -1 when the connection is done for.
static int write_out(struct origin *o) {
    for (;;) {
        if (o->pending_off == o->pending_len) {
            o->pending_off = o->pending_len = 0;
            while (o->pending_len < WRITE_CHUNK) {
                const uint8_t *data;
                ssize_t len = nghttp2_session_mem_send(o->session, &data);
                if (len < 0) return -1;
                if (len == 0) break;
                if (o->pending_len + (size_t)len > o->pending_cap) {
                    // Room for a chunk and one more frame (a larger frame gets what it needs).
                    size_t cap = o->pending_len + (size_t)len > WRITE_CHUNK + 16384 ? o->pending_len + (size_t)len : WRITE_CHUNK + 16384;
                    unsigned char *grown = realloc(o->pending, cap);
                    if (!grown) return -1;
                    o->pending = grown;
                    o->pending_cap = cap;
                }
                memcpy(o->pending + o->pending_len, data, (size_t)len);
                o->pending_len += (size_t)len;
            }
            if (o->pending_len == 0) return 0;
        }
        give_way();
        ssize_t wrote = move_bytes(o, o->pending + o->pending_off, o->pending_len - o->pending_off, 1);
        if (wrote <= 0) return (int)wrote;
        o->pending_off += (size_t)wrote;
        if (o->pending_off < o->pending_len) return 0;
    }
}

/// A connection kept from an earlier batch, checked before use: the peer may
/// have sent GOAWAY or closed it while it idled. 0 when it is usable.
static int still_usable(struct origin *o, long deadline) {
    struct pollfd p = {.fd = o->fd, .events = POLLIN};
    if (poll(&p, 1, 0) == 1 && read_in(o) != 0) return -1;
    if (o->goaway) return -1;
    if (!nghttp2_session_want_read(o->session) && !nghttp2_session_want_write(o->session)) return -1;
    if (nghttp2_session_get_remote_settings(o->session, NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS) == 0) return -1;
    // Stream ids run out at 2^31: a new connection before they do.
    if (nghttp2_session_get_next_stream_id(o->session) > (1u << 31) - STREAM_IDS_SPARE) return -1;
    if (write_out(o) != 0) return -1;
    // Idle a while: a NAT or firewall may have dropped it silently. A PING must come back.
    if (now_ms() - o->last_read < IDLE_CHECK_MS) return 0;
    o->ping_acked = 0;
    if (nghttp2_submit_ping(o->session, NGHTTP2_FLAG_NONE, NULL) != 0 || write_out(o) != 0) return -1;
    long until = now_ms() + 1000;
    if (until > deadline) until = deadline;
    while (!o->ping_acked && now_ms() < until) {
        if (o->pending_off < o->pending_len && write_out(o) != 0) return -1;
        int ready = wait_fd(o->fd, POLLIN, until);
        if (ready < 0 || (ready == 1 && read_in(o) != 0)) return -1;
    }
    return o->ping_acked && !o->goaway ? 0 : -1;
}

// MARK: one round of a batch

static int submit(struct origin *o, struct stream *s) {
    const roost_h2_request *r = s->req;
    char authority[300];
    int default_port = o->port == (o->tls ? 443 : 80);
    int v6 = strchr(o->host, ':') != NULL;
    snprintf(authority, sizeof authority, default_port ? (v6 ? "[%s]" : "%s") : (v6 ? "[%s]:%d" : "%s:%d"), o->host, o->port);
    const char *full_path = r->url + strcspn(r->url + (o->tls ? 8 : 7), "/") + (o->tls ? 8 : 7);
    size_t path_len = strcspn(full_path, "#");  // a fragment is not sent
    int post = strcmp(r->method, "POST") == 0;
    char length[24];
    snprintf(length, sizeof length, "%zu", r->body_len);
    size_t count = 0, cap = r->header_count + 7;
    nghttp2_nv stack_nva[24];
    nghttp2_nv *nva = cap <= 24 ? stack_nva : malloc(cap * sizeof *nva);
    char names[2048];
    size_t names_used = 0;
    if (!nva) return -1;
#define NV(n, nl, v, vl) (nva[count++] = (nghttp2_nv){(uint8_t *)(n), (uint8_t *)(v), (nl), (vl), NGHTTP2_NV_FLAG_NONE})
    NV(":method", 7, r->method, strlen(r->method));
    NV(":scheme", 7, o->tls ? "https" : "http", o->tls ? 5 : 4);
    NV(":authority", 10, authority, strlen(authority));
    NV(":path", 5, full_path, path_len);
    int has_agent = 0;
    for (size_t i = 0; i < r->header_count; i++) {
        const char *line = r->headers[i], *colon = strchr(line, ':');
        if (!colon || colon == line) continue;
        size_t nl = (size_t)(colon - line);
        const char *value = colon + 1;
        while (*value == ' ' || *value == '\t') value++;
        if (!*value) continue;  // a blank value removes the header, as with libcurl
        if (nl >= sizeof names - names_used) { if (nva != stack_nva) free(nva); return -2; }
        char *name = names + names_used;
        for (size_t k = 0; k < nl; k++) name[k] = (char)((line[k] >= 'A' && line[k] <= 'Z') ? line[k] + 32 : line[k]);
        names_used += nl;
        if (nl == 10 && memcmp(name, "user-agent", 10) == 0) has_agent = 1;
        if ((nl == 14 && memcmp(name, "content-length", 14) == 0) || (nl == 4 && memcmp(name, "host", 4) == 0)) continue;
        NV(name, nl, value, strlen(value));
    }
    if (!has_agent) NV("user-agent", 10, "roostd-push", 11);
    if (post) NV("content-length", 14, length, strlen(length));
#undef NV
    nghttp2_data_provider body = {.source.ptr = s, .read_callback = read_body};
    s->body_sent = 0;
    int32_t id = nghttp2_submit_request(o->session, NULL, nva, count, post ? &body : NULL, s);
    if (nva != stack_nva) free(nva);
    if (id < 0) return -1;
    o->in_flight++;
    return 0;
}

/// Fails the streams of a round that a lost connection or a timeout left
/// open. Those a connection kept from an earlier batch lost unanswered may go
/// again (it may have been closed by the peer while it idled).
static void fail_open_streams(struct origin *o, const char *why, int lost) {
    for (size_t i = 0; i < o->next; i++) {
        struct stream *s = o->queue[i];
        if (s->done) continue;
        s->done = 1;
        s->out->status = 0;
        if (lost && o->from_earlier_batch && !s->answered) s->unsent = 1;
        snprintf(s->out->error, sizeof s->out->error, "%s", why);
    }
    for (size_t i = o->next; i < o->queued; i++) {
        struct stream *s = o->queue[i];
        s->done = 1;
        s->unsent = 1;
        snprintf(s->out->error, sizeof s->out->error, "%s", why);
    }
}

/// Sends `count` streams over their origins' connections until each is
/// answered or failed, or the deadline passes.
static void run_round(roost_h2_direct *d, struct stream **streams, size_t count, long deadline) {
    struct origin *active[ORIGINS_MAX];
    size_t n_active = 0;
    for (size_t i = 0; i < d->origin_count; i++) {
        struct origin *o = &d->origins[i];
        o->queued = o->next = o->in_flight = 0;
        o->round_state = 0;
    }
    for (size_t i = 0; i < count; i++) {
        struct stream *s = streams[i];
        struct origin *o = s->origin;
        if (o->round_state == 0) {
            // The origin's first stream this round: its connection, checked or opened.
            o->round_state = 2;
            if (o->fd >= 0 && still_usable(o, deadline) != 0) close_connection(o);
            roost_h2_response failure = {0};
            if (o->fd < 0 && !is_declined(o) && o->retry_after > now_ms()) {
                // It failed a moment ago: its streams fail at once, with the reason, and go again on the outbox's schedule.
                snprintf(failure.error, sizeof failure.error, "%.200s (not tried again for a moment)", o->last_failure);
                for (size_t k = i; k < count; k++) {
                    if (streams[k]->origin != o) continue;
                    streams[k]->done = 1;
                    memcpy(streams[k]->out->error, failure.error, sizeof failure.error);
                }
            } else if (o->fd < 0 && !is_declined(o)) {
                if (open_connection(d, o, deadline, &failure) < 0) {
                    for (size_t k = i; k < count; k++) {
                        if (streams[k]->origin != o) continue;
                        streams[k]->done = 1;
                        memcpy(streams[k]->out->error, failure.error, sizeof failure.error);
                    }
                }
            }
            if (o->fd >= 0) { o->round_state = 1; active[n_active++] = o; }
        }
        // Declined origins' streams stay untouched: roost_h2_direct_perform hands them to libcurl.
        if (o->round_state != 1 || s->done) continue;
        if (o->queued == o->queue_cap) {
            size_t cap = o->queue_cap ? 2 * o->queue_cap : 64;
            struct stream **grown = realloc(o->queue, cap * sizeof *grown);
            if (!grown) { s->done = 1; set_error(s->out, "out of memory%s", NULL); continue; }
            o->queue = grown;
            o->queue_cap = cap;
        }
        o->queue[o->queued++] = s;
    }
    for (;;) {
        give_way();
        struct pollfd fds[ORIGINS_MAX];
        struct origin *polled[ORIGINS_MAX];
        size_t nfds = 0, open_streams = 0;
        for (size_t k = 0; k < n_active; k++) {
            struct origin *o = active[k];
            if (o->fd < 0 || o->broken) continue;
            uint32_t limit = nghttp2_session_get_remote_settings(o->session, NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS);
            if (limit > IN_FLIGHT_MAX) limit = IN_FLIGHT_MAX;
            while (!o->goaway && o->next < o->queued && o->in_flight < limit) {
                give_way();
                struct stream *s = o->queue[o->next];
                int r = submit(o, s);
                if (r == -2) {  // this request's own fault: it fails alone
                    s->done = 1;
                    set_error(s->out, "the request's header names are too long%s", NULL);
                } else if (r != 0) {
                    o->goaway = 1;  // no more streams on this connection (ids used up): the rest go over a new one
                    break;
                }
                o->next++;
            }
            if (!o->broken && write_out(o) != 0) o->broken = 1;
            if (o->broken) continue;
            size_t left = o->queued - o->next + o->in_flight;
            if (left == 0) continue;
            if (o->goaway && o->in_flight == 0) { o->broken = 1; continue; }  // the rest go over a new connection
            if (!nghttp2_session_want_read(o->session) && !nghttp2_session_want_write(o->session)) { o->broken = 1; continue; }
            open_streams += left;
            short events = POLLIN;
            if ((o->pending_off < o->pending_len && !o->write_wants_read) || o->read_wants_write) events |= POLLOUT;
            fds[nfds] = (struct pollfd){.fd = o->fd, .events = events};
            polled[nfds++] = o;
        }
        if (open_streams == 0) break;
        long left = deadline - now_ms();
        if (left <= 0) break;
        int r = poll(fds, nfds, (int)(left > 1000 ? 1000 : left));
        if (r < 0 && errno != EINTR) break;
        for (size_t k = 0; r > 0 && k < nfds; k++) {
            struct origin *o = polled[k];
            short got = fds[k].revents;
            if ((got & (POLLIN | POLLERR | POLLHUP)) || ((got & POLLOUT) && o->read_wants_write)) { if (read_in(o) != 0) o->broken = 1; }
            if (!o->broken && ((got & POLLOUT) || ((got & POLLIN) && o->write_wants_read))) { if (write_out(o) != 0) o->broken = 1; }
        }
    }
    // What is still open now failed: a lost connection (may go again) or the deadline.
    for (size_t k = 0; k < n_active; k++) {
        struct origin *o = active[k];
        int open = o->in_flight > 0 || o->next < o->queued;
        if (o->broken) {
            fail_open_streams(o, "the HTTP/2 connection was lost", 1);
            close_connection(o);
        } else if (open) {
            fail_open_streams(o, "the transfer did not finish in time", 0);
            close_connection(o);  // its open streams point into this batch
        } else {
            o->from_earlier_batch = 1;
        }
        if (o->fd >= 0 && !nghttp2_session_want_read(o->session) && !nghttp2_session_want_write(o->session)) close_connection(o);
    }
}

void roost_h2_direct_perform(roost_h2_direct *d, const roost_h2_request *req, roost_h2_response *out,
                             unsigned char *handled, size_t n, long timeout_ms) {
    long deadline = now_ms() + timeout_ms;
    struct stream *streams = calloc(n ? n : 1, sizeof *streams);
    struct stream **round = calloc(n ? n : 1, sizeof *round);
    if (!streams || !round) { free(streams); free(round); return; }
    size_t count = 0;
    for (size_t i = 0; i < n; i++) {
        char host[256];
        int port, tls;
        const char *path;
        if (split_url(req[i].url, host, sizeof host, &port, &tls, &path) != 0 || proxy_configured(tls)) continue;
        if (strcmp(req[i].method, "POST") != 0 && strcmp(req[i].method, "GET") != 0) continue;
        struct origin *o = find_origin(d, host, port, tls);
        if (!o || is_declined(o)) continue;
        streams[i] = (struct stream){.req = &req[i], .out = &out[i], .origin = o};
        round[count++] = &streams[i];
    }
    // Streams the peer refused, or that a connection kept from an earlier batch
    // lost before answering, go once more over a new connection.
    for (int attempt = 0; attempt < 2 && count > 0; attempt++) {
        run_round(d, round, count, deadline);
        size_t again = 0;
        for (size_t i = 0; i < count; i++) {
            struct stream *s = round[i];
            if (attempt == 0 && s->unsent && now_ms() < deadline) {
                s->done = s->answered = s->unsent = 0;
                s->out->status = 0; s->out->retry_after = -1; s->out->error[0] = 0;
                free(s->out->body); s->out->body = NULL; s->out->body_len = 0;
                round[again++] = s;
            }
        }
        count = again;
    }
    for (size_t i = 0; i < n; i++) {
        struct stream *s = &streams[i];
        // Left untouched because its origin does not offer h2 (now): libcurl sends it.
        if (!s->req || (!s->done && is_declined(s->origin))) continue;
        handled[i] = 1;
        if (s->answered && !s->out->error[0]) s->out->http_version = 2;
        else if (!s->out->error[0]) set_error(s->out, "the transfer did not finish%s", NULL);
    }
    free(streams);
    free(round);
}
