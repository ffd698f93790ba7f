#include "roost_proxy.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <netdb.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>


enum { V1_MAX = 107, V2_FIXED = 16 };

static const unsigned char V1_PREFIX[6] = {'P', 'R', 'O', 'X', 'Y', ' '};
static const unsigned char V2_SIGNATURE[12] = {0x0D, 0x0A, 0x0D, 0x0A, 0x00, 0x0D, 0x0A, 0x51, 0x55, 0x49, 0x54, 0x0A};

/* Whether the bytes there are so far agree with `want`. */
static int begins(const unsigned char *data, size_t length, const unsigned char *want, size_t want_length) {
    return memcmp(data, want, length < want_length ? length : want_length) == 0;
}

/* 1 to 5 digits, at most 65535, no sign. */
static int valid_port(const char *text) {
    size_t n = strlen(text);
    if (n == 0 || n > 5 || (n > 1 && text[0] == '0')) return 0;
    for (size_t i = 0; i < n; i++) if (text[i] < '0' || text[i] > '9') return 0;
    return atoi(text) <= 65535;
}

/* "PROXY TCP4|TCP6 source destination sport dport\r\n" or "PROXY UNKNOWN ...\r\n". */
static int parse_v1(const unsigned char *data, size_t length, char *client, size_t client_length) {
    size_t look = length < V1_MAX ? length : V1_MAX;
    const unsigned char *newline = memchr(data, '\n', look);
    if (newline == NULL) return length >= V1_MAX ? -1 : 0;
    size_t total = (size_t)(newline - data) + 1;
    if (total < 8 || data[total - 2] != '\r') return -1;
    char line[V1_MAX];
    size_t n = total - 2;
    for (size_t i = 0; i < n; i++) {
        if (data[i] < 0x20 || data[i] > 0x7E) return -1;
        line[i] = (char)data[i];
    }
    line[n] = '\0';
    if (strcmp(line, "PROXY UNKNOWN") == 0 || strncmp(line, "PROXY UNKNOWN ", 14) == 0) return (int)total;
    int family;
    if (strncmp(line, "PROXY TCP4 ", 11) == 0) family = AF_INET;
    else if (strncmp(line, "PROXY TCP6 ", 11) == 0) family = AF_INET6;
    else return -1;
    char *fields[4], *p = line + 11;
    for (int i = 0; i < 4; i++) {
        fields[i] = p;
        char *space = strchr(p, ' ');
        if ((i < 3) != (space != NULL)) return -1;
        if (space != NULL) {
            *space = '\0';
            p = space + 1;
        }
    }
    unsigned char source[16], destination[16];
    if (inet_pton(family, fields[0], source) != 1 || inet_pton(family, fields[1], destination) != 1) return -1;
    if (!valid_port(fields[2]) || !valid_port(fields[3])) return -1;
    if (inet_ntop(family, source, client, (socklen_t)client_length) == NULL) return -1;
    return (int)total;
}

/* The 12-byte signature, version 2 and command, family and transport, a
   16-bit length, then addresses (and TLVs, skipped). */
static int parse_v2(const unsigned char *data, size_t length, char *client, size_t client_length) {
    if (length < V2_FIXED) return 0;
    unsigned version = data[12] >> 4, command = data[12] & 0x0F;
    unsigned family = data[13] >> 4, transport = data[13] & 0x0F;
    if (version != 2 || command > 1 || family > 3 || transport > 2) return -1;
    size_t total = V2_FIXED + (((size_t)data[14] << 8) | data[15]);
    if (total > ROOST_PROXY_HEADER_MAX) return -1;
    if (length < total) return 0;
    /* LOCAL: the proxy speaking for itself (a health check). */
    if (command == 0) return (int)total;
    if (family == 1) {
        if (total < V2_FIXED + 12 || inet_ntop(AF_INET, data + V2_FIXED, client, (socklen_t)client_length) == NULL) return -1;
    } else if (family == 2) {
        if (total < V2_FIXED + 36 || inet_ntop(AF_INET6, data + V2_FIXED, client, (socklen_t)client_length) == NULL) return -1;
    }
    return (int)total;
}

int roost_proxy_parse(const unsigned char *data, size_t length, char *client, size_t client_length) {
    if (client_length < ROOST_PROXY_CLIENT_MAX) return -1;
    client[0] = '\0';
    if (length == 0) return 0;
    if (data[0] == 'P') {
        if (!begins(data, length, V1_PREFIX, sizeof V1_PREFIX)) return -1;
        return parse_v1(data, length, client, client_length);
    }
    if (!begins(data, length, V2_SIGNATURE, sizeof V2_SIGNATURE)) return -1;
    return length < sizeof V2_SIGNATURE ? 0 : parse_v2(data, length, client, client_length);
}

/* The hooks of this loop thread's PROXY fronts (all of a loop's fronts
   share one set); set by each new connection, read by its callbacks. */
static __thread const roost_proxy_hooks *loop_hooks;

/* evhttp passes its connection as the bufferevent's callback argument. */
static struct evhttp_connection *evhttp_connection_of(struct bufferevent *bev) {
    void *arg = NULL;
    bufferevent_getcb(bev, NULL, NULL, NULL, &arg);
    return arg;
}

static void connection_closed(struct evhttp_connection *connection, void *arg) {
    const roost_proxy_hooks *hooks = arg;
    hooks->closed(connection, hooks->arg);
}

void roost_proxy_forget(struct evhttp_connection *connection) {
    if (loop_hooks != NULL) loop_hooks->closed(connection, loop_hooks->arg);
}

static int peer_is_trusted(struct bufferevent *bev, const roost_proxy_hooks *hooks) {
    struct sockaddr_storage address;
    socklen_t length = sizeof address;
    char host[NI_MAXHOST];
    evutil_socket_t fd = bufferevent_getfd(bev);
    if (fd < 0 || getpeername(fd, (struct sockaddr *)&address, &length) != 0) return 0;
    if (getnameinfo((struct sockaddr *)&address, length, host, sizeof host, NULL, 0, NI_NUMERICHOST) != 0) return 0;
    return hooks->trusted(host, hooks->arg);
}

/* The input callback of a connection still waiting for its header. It runs
   inside libevent's read, before evhttp's read callback: a whole header is
   drained and the callback removes itself; a partial one holds evhttp back
   with a read low-water mark one byte above what is there. */
static void read_header(struct evbuffer *input, const struct evbuffer_cb_info *info, void *arg) {
    struct bufferevent *bev = arg;
    const roost_proxy_hooks *hooks = loop_hooks;
    if (info->n_added == 0 || hooks == NULL) return;
    struct evhttp_connection *connection = evhttp_connection_of(bev);
    size_t have = evbuffer_get_length(input);
    size_t look = have < ROOST_PROXY_HEADER_MAX ? have : ROOST_PROXY_HEADER_MAX;
    char client[ROOST_PROXY_CLIENT_MAX];
    int n = -1;
    if (connection != NULL && peer_is_trusted(bev, hooks)) {
        unsigned char *bytes = evbuffer_pullup(input, (ev_ssize_t)look);
        if (bytes != NULL) n = roost_proxy_parse(bytes, look, client, sizeof client);
    }
    if (n == 0) {
        /* At most ROOST_PROXY_HEADER_SECONDS between the header's bytes. */
        evhttp_connection_set_timeout(connection, ROOST_PROXY_HEADER_SECONDS);
        bufferevent_setwatermark(bev, EV_READ, have + 1, 0);
        return;
    }
    evbuffer_remove_cb(input, read_header, bev);
    bufferevent_setwatermark(bev, EV_READ, 0, 0);
    if (n < 0) {
        /* Nothing reaches evhttp; the end of file it is told of frees the
           connection (libevent's read holds the bufferevent until it returns). */
        evbuffer_drain(input, have);
        bufferevent_disable(bev, EV_READ);
        bufferevent_trigger_event(bev, BEV_EVENT_EOF | BEV_EVENT_READING, 0);
        return;
    }
    evbuffer_drain(input, (size_t)n);
    evhttp_connection_set_timeout(connection, hooks->idle_seconds);
    if (client[0] != '\0') {
        hooks->found(connection, client, hooks->arg);
        evhttp_connection_set_closecb(connection, connection_closed, (void *)hooks);
    }
}

static struct bufferevent *proxy_socket_new(struct event_base *base, const roost_proxy_hooks *hooks) {
    loop_hooks = hooks;
    struct bufferevent *bev = bufferevent_socket_new(base, -1, BEV_OPT_CLOSE_ON_FREE);
    if (bev == NULL) return NULL;
    evbuffer_add_cb(bufferevent_get_input(bev), read_header, bev);
    return bev;
}

static struct bufferevent *new_proxy_connection(struct event_base *base, void *arg) {
    struct bufferevent *bev = proxy_socket_new(base, arg);
    /* evhttp would fall back to a connection that never reads the header. */
    if (bev == NULL) abort();
    return bev;
}

void roost_http_use_proxy(struct evhttp *http, const roost_proxy_hooks *hooks) {
    evhttp_set_bevcb(http, new_proxy_connection, (void *)hooks);
}
