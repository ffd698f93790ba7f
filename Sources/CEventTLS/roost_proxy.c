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
