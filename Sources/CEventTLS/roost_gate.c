#include "roost_gate.h"
#include "roost_proxy.h"
#include "roost_tls.h"
#include "roost_event.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <netdb.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>

/* One evhttp's kind of connection and its loop's hooks (never freed, like the evhttp). */
typedef struct gate_front {
    const roost_gate_hooks *hooks;
    int kind;
    roost_tls *tls;
} gate_front;

enum phase {
    PHASE_PROXY,    /* waiting for the PROXY header */
    PHASE_HEAD,     /* reading a request head; evhttp sees it only whole and valid */
    PHASE_BODY,     /* evhttp reads the passed head and its body */
    PHASE_OPAQUE,   /* a chunked body: the reply closes the connection, nothing more is read as a head */
    PHASE_REFUSED,  /* only the refusal request is left for evhttp */
};

/* A socket peer address as 16 bytes: IPv4 as ::ffff:a.b.c.d, IPv6 by its /64
   (one subscriber's share, as the other per-address limits count it). */
typedef struct peer_key { unsigned char bytes[16]; } peer_key;

typedef struct roost_gate {
    struct bufferevent *bev;
    const gate_front *front;
    struct evbuffer_cb_entry *entry;
    struct roost_gate *next_newborn;
    /* A partial head, kept from evhttp until it is whole (made on first need). */
    struct evbuffer *held;
    /* CLOCK_MONOTONIC nanoseconds by which the head must be whole; 0: none running. */
    uint64_t deadline;
    /* Bytes evhttp has taken of the current request, and all it will take (head and body). */
    uint64_t consumed, request_length;
    /* Bytes of the current head scanned, and the length of its current line. */
    size_t scanned, line_length;
    /* What is left of the refusal request evhttp has not read yet. */
    size_t refusal_left;
    char refusal[160];
    enum phase phase;
    /* in_read: inside the bufferevent's read (a socket bufferevent's input
       takes new bytes only then: libevent freezes its end otherwise). */
    /* shortened: the connection's timeout was cut to what is left of the head's time. */
    unsigned char busy, in_read, after_cr, counted, closed, shortened;
    peer_key peer;
} roost_gate;

/* ---- Connections per address (all loops) ---- */

enum { PEER_BUCKETS = 4096 };
typedef struct peer_entry { peer_key key; int count; struct peer_entry *next; } peer_entry;
static peer_entry *peer_table[PEER_BUCKETS];
static pthread_mutex_t peer_lock = PTHREAD_MUTEX_INITIALIZER;

static unsigned peer_bucket(const peer_key *key) {
    uint32_t h = 2166136261u;
    for (int i = 0; i < 16; i++) h = (h ^ key->bytes[i]) * 16777619u;
    return h % PEER_BUCKETS;
}

/* Counts one more connection of `key` unless that passes `limit`; returns whether counted. */
static int peer_take(const peer_key *key, int limit, int exempt) {
    pthread_mutex_lock(&peer_lock);
    peer_entry **slot = &peer_table[peer_bucket(key)];
    peer_entry *e = *slot;
    while (e != NULL && memcmp(e->key.bytes, key->bytes, 16) != 0) e = e->next;
    int ok = 1;
    if (e != NULL && e->count >= limit && !exempt) {
        ok = 0;
    } else if (e != NULL) {
        e->count++;
    } else if ((e = calloc(1, sizeof *e)) != NULL) {
        e->key = *key;
        e->count = 1;
        e->next = *slot;
        *slot = e;
    } else {
        ok = 0;
    }
    pthread_mutex_unlock(&peer_lock);
    return ok;
}

static void peer_release(const peer_key *key) {
    pthread_mutex_lock(&peer_lock);
    peer_entry **slot = &peer_table[peer_bucket(key)];
    while (*slot != NULL && memcmp((*slot)->key.bytes, key->bytes, 16) != 0) slot = &(*slot)->next;
    peer_entry *e = *slot;
    if (e != NULL && --e->count <= 0) {
        *slot = e->next;
        free(e);
    }
    pthread_mutex_unlock(&peer_lock);
}

/* ---- Small helpers ---- */

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* evhttp passes its connection as the bufferevent's callback argument. */
static struct evhttp_connection *connection_of(struct bufferevent *bev) {
    void *arg = NULL;
    bufferevent_getcb(bev, NULL, NULL, NULL, &arg);
    return arg;
}

/* The socket peer, numeric, and as a key. */
static int peer_of(struct bufferevent *bev, char *host, size_t host_length, peer_key *key) {
    struct sockaddr_storage address;
    socklen_t length = sizeof address;
    evutil_socket_t fd = bufferevent_getfd(bev);
    if (fd < 0 || getpeername(fd, (struct sockaddr *)&address, &length) != 0) return 0;
    if (key != NULL) {
        memset(key, 0, sizeof *key);
        if (address.ss_family == AF_INET) {
            key->bytes[10] = key->bytes[11] = 0xFF;
            memcpy(key->bytes + 12, &((struct sockaddr_in *)&address)->sin_addr, 4);
        } else if (address.ss_family == AF_INET6) {
            memcpy(key->bytes, &((struct sockaddr_in6 *)&address)->sin6_addr, 8);
            /* An IPv4-mapped address keeps all of it. */
            static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF};
            if (memcmp(&((struct sockaddr_in6 *)&address)->sin6_addr, mapped, 12) == 0) {
                memcpy(key->bytes, &((struct sockaddr_in6 *)&address)->sin6_addr, 16);
            }
        }
    }
    if (host != NULL && getnameinfo((struct sockaddr *)&address, length, host, (socklen_t)host_length, NULL, 0, NI_NUMERICHOST) != 0) {
        return 0;
    }
    return 1;
}

static void set_timeout_ns(roost_gate *g, uint64_t ns) {
    struct evhttp_connection *connection = connection_of(g->bev);
    if (connection == NULL) return;
    struct timeval tv = {(time_t)(ns / 1000000000u), (suseconds_t)(ns % 1000000000u / 1000u)};
    if (tv.tv_sec == 0 && tv.tv_usec == 0) tv.tv_usec = 1;
    evhttp_connection_set_timeout_tv(connection, &tv);
    g->shortened = 1;
}

/* Gives the connection evhttp's idle timeout back, if the head's time had cut it
   (a head that came whole in one read costs no timer change). */
static void restore_idle_timeout(roost_gate *g) {
    if (!g->shortened) return;
    g->shortened = 0;
    struct evhttp_connection *connection = connection_of(g->bev);
    if (connection != NULL) evhttp_connection_set_timeout(connection, g->front->hooks->idle_seconds);
}

/* Ends the connection unserved: nothing reaches evhttp, and the end of file
   it is told of frees the connection (and, through its close callback, the
   gate). Call only where libevent or the gate holds the bufferevent. */
static void close_now(roost_gate *g) {
    struct evbuffer *input = bufferevent_get_input(g->bev);
    g->busy = 1;
    evbuffer_drain(input, evbuffer_get_length(input));
    if (g->held != NULL) evbuffer_drain(g->held, evbuffer_get_length(g->held));
    g->busy = 0;
    g->phase = PHASE_REFUSED;
    g->refusal_left = 0;
    bufferevent_disable(g->bev, EV_READ);
    bufferevent_trigger_event(g->bev, BEV_EVENT_EOF | BEV_EVENT_READING, 0);
}

/* Adds bytes to the input; outside the bufferevent's read a socket
   bufferevent's input end is frozen, so it is thawed for the addition. */
static void add_input(roost_gate *g, struct evbuffer *input, const char *bytes, size_t length) {
    int thaw = !g->in_read && g->front->kind != ROOST_GATE_TLS;
    if (thaw) evbuffer_unfreeze(input, 0);
    evbuffer_add(input, bytes, length);
    if (thaw) evbuffer_freeze(input, 0);
}

/* Replaces whatever is left to read with the refusal request (see roost_gate.h). */
static void refuse(roost_gate *g, int status, const char *reason) {
    struct evbuffer *input = bufferevent_get_input(g->bev);
    int n = snprintf(g->refusal, sizeof g->refusal,
                     "OPTIONS * HTTP/1.1\r\nConnection: close\r\nX-Roost-Refused: %d %s\r\n\r\n", status, reason);
    g->busy = 1;
    evbuffer_drain(input, evbuffer_get_length(input));
    if (g->held != NULL) evbuffer_drain(g->held, evbuffer_get_length(g->held));
    add_input(g, input, g->refusal, (size_t)n);
    g->busy = 0;
    g->phase = PHASE_REFUSED;
    g->refusal_left = (size_t)n;
    g->deadline = 0;
    restore_idle_timeout(g);
}

/* ---- The request head ---- */

static int is_tchar(unsigned char c) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return 1;
    return c != 0 && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

static int names_equal(const unsigned char *name, size_t length, const char *want) {
    size_t n = strlen(want);
    if (length != n) return 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = name[i];
        if (c >= 'A' && c <= 'Z') c = (unsigned char)(c + 32);
        if (c != (unsigned char)want[i]) return 0;
    }
    return 1;
}

typedef struct head_facts {
    uint64_t body_length;
    int chunked;
    /* A HEAD or TRACE with a body, which libevent 2.1 never reads: the reply
       closes the connection, and nothing after the head is read as a head. */
    int body_unread;
    int status;
    const char *reason;
} head_facts;

static int fail(head_facts *facts, int status, const char *reason) {
    facts->status = status;
    facts->reason = reason;
    return 0;
}

/* Checks a whole head (`length` bytes, every line ending in CRLF, the last one
   empty). Returns 1 with the body's framing in `facts`, or 0 with why not. */
static int check_head(const unsigned char *p, size_t length, head_facts *facts) {
    memset(facts, 0, sizeof *facts);
    const unsigned char *end = p + length;
    /* Request line: method SP origin-form SP HTTP/1.x */
    const unsigned char *line_end = memchr(p, '\r', length);
    const unsigned char *q = p;
    while (q < line_end && is_tchar(*q)) q++;
    if (q == p || q == line_end || *q != ' ') return fail(facts, 400, "malformed request line");
    size_t method_length = (size_t)(q - p);
    int bodiless = (method_length == 4 && memcmp(p, "HEAD", 4) == 0) || (method_length == 5 && memcmp(p, "TRACE", 5) == 0);
    const unsigned char *target = ++q;
    while (q < line_end && *q > 0x20 && *q != 0x7F) q++;
    if (q == target || q == line_end) return fail(facts, 400, "malformed request line");
    if (target[0] != '/' || (q - target > 1 && target[1] == '/')) {
        return fail(facts, 400, "the request target must be a path (origin-form)");
    }
    if (line_end - q != 9 || memcmp(q, " HTTP/1.", 8) != 0 || (q[8] != '0' && q[8] != '1')) {
        return fail(facts, 400, "malformed request line");
    }
    int content_lengths = 0, transfer_encodings = 0;
    /* Header fields, up to the empty line. */
    for (const unsigned char *line = line_end + 2; line < end; line = line_end + 2) {
        line_end = memchr(line, '\r', (size_t)(end - line));
        if (line_end == line) break;
        if (*line == ' ' || *line == '\t') return fail(facts, 400, "folded header lines are not accepted");
        const unsigned char *name_end = line;
        while (name_end < line_end && is_tchar(*name_end)) name_end++;
        if (name_end == line || name_end == line_end || *name_end != ':') return fail(facts, 400, "malformed header field name");
        const unsigned char *value = name_end + 1, *value_end = line_end;
        for (const unsigned char *v = value; v < value_end; v++) {
            if ((*v < 0x20 && *v != '\t') || *v == 0x7F) return fail(facts, 400, "control character in a header value");
        }
        while (value < value_end && (*value == ' ' || *value == '\t')) value++;
        while (value_end > value && (value_end[-1] == ' ' || value_end[-1] == '\t')) value_end--;
        size_t name_length = (size_t)(name_end - line), value_length = (size_t)(value_end - value);
        if (names_equal(line, name_length, "content-length")) {
            if (++content_lengths > 1) return fail(facts, 400, "more than one Content-Length");
            if (value_length == 0 || value_length > 18) return fail(facts, 400, "Content-Length must be digits");
            uint64_t n = 0;
            for (size_t i = 0; i < value_length; i++) {
                if (value[i] < '0' || value[i] > '9') return fail(facts, 400, "Content-Length must be digits");
                n = n * 10 + (uint64_t)(value[i] - '0');
            }
            facts->body_length = n;
        } else if (names_equal(line, name_length, "transfer-encoding")) {
            if (++transfer_encodings > 1) return fail(facts, 400, "more than one Transfer-Encoding");
            if (!names_equal(value, value_length, "chunked")) return fail(facts, 400, "Transfer-Encoding must be chunked");
            facts->chunked = 1;
        }
    }
    if (content_lengths > 0 && transfer_encodings > 0) return fail(facts, 400, "both Content-Length and Transfer-Encoding");
    if (bodiless && (facts->chunked || facts->body_length > 0)) {
        facts->body_unread = 1;
        facts->body_length = 0;
    }
    return 1;
}

static void begin_head(roost_gate *g) {
    g->phase = PHASE_HEAD;
    g->scanned = g->line_length = 0;
    g->after_cr = 0;
    g->consumed = g->request_length = 0;
}

/* Passes a whole, valid head (and whatever follows it) on to evhttp. */
static void pass(roost_gate *g, struct evbuffer *input, size_t head_length, const head_facts *facts) {
    if (g->held != NULL && evbuffer_get_length(g->held) > 0) {
        g->busy = 1;
        evbuffer_prepend_buffer(input, g->held);
        g->busy = 0;
    }
    g->deadline = 0;
    restore_idle_timeout(g);
    g->consumed = 0;
    g->request_length = head_length + facts->body_length;
    g->phase = facts->chunked || facts->body_unread ? PHASE_OPAQUE : PHASE_BODY;
}

/* Looks at what is there of the current head: passes it once whole and
   valid, refuses it once invalid, otherwise keeps it from evhttp. */
static void examine(roost_gate *g, struct evbuffer *input) {
    if (g->held != NULL && evbuffer_get_length(g->held) > 0) {
        g->busy = 1;
        evbuffer_add_buffer(g->held, input);
        g->busy = 0;
    }
    struct evbuffer *source = g->held != NULL && evbuffer_get_length(g->held) > 0 ? g->held : input;
    size_t have = evbuffer_get_length(source);
    if (have == 0) return;
    size_t look = have < ROOST_GATE_HEAD_MAX ? have : ROOST_GATE_HEAD_MAX;
    const unsigned char *p = evbuffer_pullup(source, (ev_ssize_t)look);
    if (p == NULL) return close_now(g);
    size_t head_length = 0;
    for (size_t i = g->scanned; i < look; i++) {
        unsigned char c = p[i];
        if (g->after_cr) {
            if (c != '\n') return refuse(g, 400, "line ends must be CRLF");
            g->after_cr = 0;
            if (g->line_length == 0) {
                head_length = i + 1;
                break;
            }
            g->line_length = 0;
        } else if (c == '\r') {
            g->after_cr = 1;
        } else if (c == '\n') {
            return refuse(g, 400, "line ends must be CRLF");
        } else {
            g->line_length++;
        }
    }
    if (head_length == 0) {
        g->scanned = look;
        if (look >= ROOST_GATE_HEAD_MAX) return refuse(g, 431, "the request head is too large");
        uint64_t now = now_ns();
        if (g->deadline == 0) g->deadline = now + (uint64_t)g->front->hooks->header_seconds * 1000000000u;
        if (now >= g->deadline) return close_now(g);
        set_timeout_ns(g, g->deadline - now);
        if (source == input) {
            if (g->held == NULL && (g->held = evbuffer_new()) == NULL) return close_now(g);
            g->busy = 1;
            evbuffer_add_buffer(g->held, input);
            g->busy = 0;
        }
        return;
    }
    head_facts facts;
    if (!check_head(p, head_length, &facts)) return refuse(g, facts.status, facts.reason);
    pass(g, input, head_length, &facts);
}

/* The PROXY header, before the first request head. */
static void read_proxy_header(roost_gate *g, struct evbuffer *input) {
    const roost_gate_hooks *hooks = g->front->hooks;
    size_t have = evbuffer_get_length(input);
    size_t look = have < ROOST_PROXY_HEADER_MAX ? have : ROOST_PROXY_HEADER_MAX;
    char client[ROOST_PROXY_CLIENT_MAX], peer[NI_MAXHOST];
    int n = -1;
    if (peer_of(g->bev, peer, sizeof peer, NULL) && hooks->trusted(peer, hooks->arg)) {
        unsigned char *bytes = evbuffer_pullup(input, (ev_ssize_t)look);
        if (bytes != NULL) n = roost_proxy_parse(bytes, look, client, sizeof client);
    }
    if (n < 0) return close_now(g);
    if (n == 0) {
        /* Hold evhttp back with a read low-water mark one byte above what is there. */
        uint64_t now = now_ns();
        if (g->deadline == 0) g->deadline = now + (uint64_t)hooks->header_seconds * 1000000000u;
        if (now >= g->deadline) return close_now(g);
        set_timeout_ns(g, g->deadline - now);
        bufferevent_setwatermark(g->bev, EV_READ, have + 1, 0);
        return;
    }
    bufferevent_setwatermark(g->bev, EV_READ, 0, 0);
    g->busy = 1;
    evbuffer_drain(input, (size_t)n);
    g->busy = 0;
    struct evhttp_connection *connection = connection_of(g->bev);
    if (client[0] != '\0' && connection != NULL) hooks->found(connection, client, hooks->arg);
    begin_head(g);
    examine(g, input);
}

/* The input buffer's callback: runs inside libevent's reads (after bytes were
   added, before evhttp's read callback) and inside evhttp's parsing (after it
   took bytes). */
static void on_input(struct evbuffer *input, const struct evbuffer_cb_info *info, void *arg) {
    roost_gate *g = arg;
    if (g->busy) return;
    g->in_read = info->n_added > 0;
    switch (g->phase) {
    case PHASE_PROXY:
        if (info->n_added > 0) read_proxy_header(g, input);
        return;
    case PHASE_HEAD:
        if (info->n_added == 0) return;
        examine(g, input);
        /* A large upload's first read carried its head: read on at once. */
        if (g->phase == PHASE_BODY && g->front->kind == ROOST_GATE_PLAIN) {
            g->busy = 1;
            roost_read_more(g->bev, input, info->n_added);
            g->busy = 0;
        }
        return;
    case PHASE_BODY:
        if (info->n_added > 0 && g->front->kind == ROOST_GATE_PLAIN) {
            g->busy = 1;
            roost_read_more(g->bev, input, info->n_added);
            g->busy = 0;
        }
        g->consumed += info->n_deleted;
        if (info->n_deleted > 0 && g->consumed >= g->request_length) {
            /* evhttp has the whole request: what is left starts the next head. */
            begin_head(g);
            examine(g, input);
        }
        return;
    case PHASE_OPAQUE:
        if (info->n_added > 0 && g->front->kind == ROOST_GATE_PLAIN) {
            g->busy = 1;
            roost_read_more(g->bev, input, info->n_added);
            g->busy = 0;
        }
        return;
    case PHASE_REFUSED: {
        size_t taken = info->n_deleted < g->refusal_left ? info->n_deleted : g->refusal_left;
        g->refusal_left -= taken;
        if (info->n_added > 0) {
            /* Drop what came after the refused head; keep the refusal's unread rest. */
            size_t length = strlen(g->refusal);
            g->busy = 1;
            evbuffer_drain(input, evbuffer_get_length(input));
            add_input(g, input, g->refusal + length - g->refusal_left, g->refusal_left);
            g->busy = 0;
        }
        return;
    }
    }
}

/* ---- Connection lifetime ---- */

/* This loop thread's connections made but not yet adopted, and the event that adopts them. */
static __thread roost_gate *newborn;
static __thread struct event *adopt_event;

static void release(roost_gate *g) {
    if (g->counted) peer_release(&g->peer);
    if (g->entry != NULL) evbuffer_remove_cb_entry(bufferevent_get_input(g->bev), g->entry);
    if (g->held != NULL) evbuffer_free(g->held);
    struct bufferevent *bev = g->bev;
    free(g);
    bufferevent_decref(bev);
}

static void connection_closed(struct evhttp_connection *connection, void *arg) {
    roost_gate *g = arg;
    if (g->closed) return;
    g->closed = 1;
    g->front->hooks->closed(connection, g->front->hooks->arg);
    release(g);
}

/* Runs after evhttp has made the connections of this loop iteration's accepts:
   gives each its close callback and counts it against its address. */
static void adopt(evutil_socket_t fd, short what, void *arg) {
    (void)fd;
    (void)what;
    (void)arg;
    while (newborn != NULL) {
        roost_gate *g = newborn;
        newborn = g->next_newborn;
        void (*readcb)(struct bufferevent *, void *) = NULL;
        bufferevent_getcb(g->bev, &readcb, NULL, NULL, NULL);
        struct evhttp_connection *connection = connection_of(g->bev);
        if (readcb == NULL || connection == NULL) {
            /* evhttp failed to make the connection and freed the bufferevent. */
            release(g);
            continue;
        }
        evhttp_connection_set_closecb(connection, connection_closed, g);
        const roost_gate_hooks *hooks = g->front->hooks;
        if (hooks->max_per_address > 0 && peer_of(g->bev, NULL, 0, &g->peer)) {
            g->counted = (unsigned char)peer_take(&g->peer, hooks->max_per_address, 0);
            if (!g->counted) {
                /* Over the limit: only now ask whether the peer is exempt (a trusted proxy). */
                char host[NI_MAXHOST];
                if (peer_of(g->bev, host, sizeof host, NULL) && hooks->exempt(host, hooks->arg)) {
                    g->counted = (unsigned char)peer_take(&g->peer, hooks->max_per_address, 1);
                }
            }
            if (!g->counted) {
                close_now(g);  /* frees g through the close callback */
                continue;
            }
        }
    }
}

static struct bufferevent *new_connection(struct event_base *base, void *arg) {
    const gate_front *front = arg;
    struct bufferevent *bev = front->kind == ROOST_GATE_TLS
        ? roost_tls_bufferevent_new(base, front->tls)
        : bufferevent_socket_new(base, -1, BEV_OPT_CLOSE_ON_FREE);
    /* evhttp would fall back to a connection without the gate. */
    if (bev == NULL) abort();
    roost_gate *g = calloc(1, sizeof *g);
    if (g == NULL) abort();
    /* One per loop thread; a thread that runs a second base (tests) gets a new one. */
    if (adopt_event == NULL || event_get_base(adopt_event) != base) {
        if ((adopt_event = event_new(base, -1, 0, adopt, NULL)) == NULL) abort();
    }
    g->bev = bev;
    g->front = front;
    g->phase = front->kind == ROOST_GATE_PROXY ? PHASE_PROXY : PHASE_HEAD;
    /* Held until the close callback, so adoption never sees freed memory. */
    bufferevent_incref(bev);
    g->entry = evbuffer_add_cb(bufferevent_get_input(bev), on_input, g);
    if (g->entry == NULL) abort();
    g->next_newborn = newborn;
    newborn = g;
    event_active(adopt_event, 0, 0);
    return bev;
}

void roost_http_use_gate(struct evhttp *http, const roost_gate_hooks *hooks, int kind, roost_tls *tls) {
    gate_front *front = calloc(1, sizeof *front);
    if (front == NULL) abort();
    front->hooks = hooks;
    front->kind = kind;
    front->tls = tls;
    evhttp_set_bevcb(http, new_connection, front);
}
