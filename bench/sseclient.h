/* What bench/sseclient.c and bench/sseclient_stats.c share: the streams and the counters. */
#ifndef SSECLIENT_H
#define SSECLIENT_H
#include <stddef.h>
#include <stdint.h>

enum { ST_CONNECTING, ST_HEAD, ST_BODY, ST_CLOSED };
enum { CH_SIZE, CH_DATA, CH_CRLF };

typedef struct {
    int fd, state, chunked, ch_state, got_ready;
    long ch_left;
    char head[4096];
    size_t head_len;
    char *line;          /* decoded bytes not yet ending in \n */
    size_t line_len, line_cap;
    char sizebuf[32];
    size_t size_len;
    long events;
} Conn;

extern Conn *conns;
extern int nconns, n_open, n_closed;
extern long heartbeats;
extern uint32_t *lats;        /* one latency (µs) per event since the last RESET */
extern size_t nlat;
extern double first_ms, last_ms;

void report(void);  /* REPORT: latency percentiles, per-stream counts, CPU */
void count(void);   /* COUNT: cheap, no sorting */
void reset(void);   /* RESET: forget the events counted so far */

#endif
