/* A one-request-at-a-time HTTP client for bench/live_fanout.py, in C so that it is not what is measured.
 *
 *   gcc -O2 -o bench/out/httpseq bench/httpseq.c
 *   httpseq PORT post PATH N
 *       N creates sent one after another on one keep-alive connection, each the moment the last
 *       was answered; body {"n":i,"t":<µs since the epoch>,"pad":"x…"} (sseclient times "t").
 *   httpseq PORT get PATH_PREFIX IDS_FILE RATE SECONDS [CONNECTIONS]
 *       GET PATH_PREFIX/<id> (ids from the file, one a line, in turn) RATE times a second for
 *       SECONDS, each at its slot (t0 + i/RATE) or at once when late, one outstanding at a time,
 *       taking CONNECTIONS keep-alive connections (default 4) in turn, so both loops are sampled.
 *
 * SIGTERM ends a get run early (it prints the DONE line of what it sent).
 * HTTPSEQ_AUTHORIZATION in the environment, when set, is sent as each GET's Authorization header.
 * HTTPSEQ_SAMPLES, when set, names a file that gets every answered request's latency (µs), one a line.
 *
 * The client shares the cores of the daemon it measures (a real one is on another machine), so it
 * takes the kernel's shortest time slice (0.1 ms, Linux 6.12+), as roostd's loops and readers do:
 * woken by an answer, it runs at once instead of after a busy thread's slice, and its own wake-up
 * is not what is measured. An older kernel ignores it.
 *
 * Prints one line: DONE sent=.. errors=.. start_ms=.. end_ms=.. p50_us=.. p90_us=.. p99_us=.. max_us=..
 * start_ms and end_ms are CLOCK_MONOTONIC milliseconds (sseclient's first_ms/last_ms clock): the
 * first request's send and the last answer's receipt. A request answered with another status than
 * 200 or 201, or a broken connection, counts as an error (the connection is opened again).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/socket.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

static int port;

static double mono_us(void) {
    struct timespec ts; clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static long long real_us(void) {
    struct timespec ts; clock_gettime(CLOCK_REALTIME, &ts);
    return (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static int dial(void) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int one = 1; setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0) { perror("connect"); exit(1); }
    return fd;
}

static int send_all(int fd, const char *p, size_t n) {
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0) { if (errno == EINTR) continue; return -1; }
        p += w; n -= w;
    }
    return 0;
}

/* Reads one response (Content-Length or chunked body); returns its status, or -1 when the connection broke. */
static int read_response(int fd) {
    static char buf[1 << 16];
    size_t have = 0;
    char *end = NULL;
    while (!end) {
        if (have == sizeof buf - 1) return -1;
        ssize_t r = read(fd, buf + have, sizeof buf - 1 - have);
        if (r <= 0) { if (r < 0 && errno == EINTR) continue; return -1; }
        have += r; buf[have] = 0;
        end = strstr(buf, "\r\n\r\n");
    }
    int status = atoi(buf + 9);
    size_t head = end + 4 - buf, body = have - head;
    const char *cl = strcasestr(buf, "\r\ncontent-length:");
    if (cl && cl < end) {
        long want = atol(cl + 17);
        while ((long)body < want) {
            ssize_t r = read(fd, buf, sizeof buf);
            if (r <= 0) { if (r < 0 && errno == EINTR) continue; return -1; }
            body += r;
        }
        return status;
    }
    if (!strcasestr(buf, "\r\ntransfer-encoding: chunked")) return status;
    /* chunked: keep the unread part and walk the chunks until the last one */
    memmove(buf, buf + head, body); have = body;
    size_t at = 0;
    for (;;) {
        char *nl;
        while (!(nl = memchr(buf + at, '\n', have - at))) {
            if (have == sizeof buf) { memmove(buf, buf + at, have - at); have -= at; at = 0; }
            ssize_t r = read(fd, buf + have, sizeof buf - have);
            if (r <= 0) return -1;
            have += r;
        }
        long size = strtol(buf + at, NULL, 16);
        at = nl + 1 - buf;
        long need = size + 2;  /* data and its CRLF (for the last chunk: the empty trailer line) */
        while ((long)(have - at) < need) {
            if (at) { memmove(buf, buf + at, have - at); have -= at; at = 0; }
            ssize_t r = read(fd, buf + have, sizeof buf - have);
            if (r <= 0) return -1;
            have += r;
        }
        at += need;
        if (size == 0) return status;
    }
}

static int cmp_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

static void done(long sent, long errors, double start, double end, uint32_t *lat, long n) {
    const char *samples = getenv("HTTPSEQ_SAMPLES");
    if (samples) {  /* every answered request's latency (µs), in the order sent, so that runs can be pooled */
        FILE *f = fopen(samples, "w");
        if (!f) { perror(samples); exit(1); }
        for (long i = 0; i < n; i++) fprintf(f, "%u\n", lat[i]);
        fclose(f);
    }
    qsort(lat, n, sizeof *lat, cmp_u32);
    printf("DONE sent=%ld errors=%ld start_ms=%.3f end_ms=%.3f p50_us=%u p90_us=%u p99_us=%u max_us=%u\n", sent, errors,
           start / 1e3, end / 1e3, n ? lat[n / 2] : 0, n ? lat[(long)(n * 0.9)] : 0, n ? lat[(long)(n * 0.99)] : 0,
           n ? lat[n - 1] : 0);
}

static void post(const char *path, long n) {
    int fd = dial();
    uint32_t *lat = calloc(n ? n : 1, sizeof *lat);
    char pad[101]; memset(pad, 'x', 100); pad[100] = 0;
    char body[512], req[1024];
    long sent = 0, errors = 0;
    double start = mono_us(), end = start;
    for (long i = 0; i < n; i++) {
        int blen = snprintf(body, sizeof body, "{\"n\":%ld,\"t\":%lld,\"pad\":\"%s\"}", i, real_us(), pad);
        int rlen = snprintf(req, sizeof req, "POST %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: application/json\r\n"
                            "Content-Length: %d\r\n\r\n%s", path, port, blen, body);
        double s = mono_us();
        int status = send_all(fd, req, rlen) == 0 ? read_response(fd) : -1;
        end = mono_us();
        if (status == 200 || status == 201) lat[sent++] = (uint32_t)(end - s);
        else { errors++; if (status < 0) { close(fd); fd = dial(); } }
    }
    done(sent, errors, start, end, lat, sent);
}

/* struct sched_attr (linux/sched/types.h): SCHED_OTHER at the nice value it has, with a 0.1 ms slice. */
static void take_short_slice(void) {
    struct { uint32_t size, policy; uint64_t flags; int32_t nice; uint32_t priority; uint64_t runtime, deadline, period; uint32_t umin, umax; }
        attr = { .size = sizeof attr, .runtime = 100000 };
    attr.nice = getpriority(PRIO_PROCESS, 0);
    syscall(SYS_sched_setattr, 0, &attr, 0);
}

/// SIGTERM ends a `get` run early: it stops sending and prints what it has.
static volatile sig_atomic_t stop_requested;
static void on_term(int sig) { (void)sig; stop_requested = 1; }

static void get(const char *prefix, const char *ids_file, double rate, double seconds, int nconn) {
    FILE *f = fopen(ids_file, "r");
    if (!f) { perror(ids_file); exit(1); }
    char **ids = NULL; long nids = 0, cap = 0; char line[256];
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = 0;
        if (!*line) continue;
        if (nids == cap) { cap = cap ? 2 * cap : 1024; ids = realloc(ids, cap * sizeof *ids); }
        ids[nids++] = strdup(line);
    }
    fclose(f);
    if (!nids) { fprintf(stderr, "no ids in %s\n", ids_file); exit(1); }
    const char *auth = getenv("HTTPSEQ_AUTHORIZATION");
    signal(SIGTERM, on_term);
    int *fds = calloc(nconn, sizeof *fds);
    for (int c = 0; c < nconn; c++) fds[c] = dial();
    long n = (long)(rate * seconds);
    uint32_t *lat = calloc(n ? n : 1, sizeof *lat);
    long sent = 0, errors = 0;
    char req[2048];
    double t0 = mono_us() + 1000, end = t0;
    for (long i = 0; i < n && !stop_requested; i++) {
        double slot = t0 + i * 1e6 / rate, wait = slot - mono_us();
        if (wait > 0) { struct timespec ts = { (time_t)(wait / 1e6), (long)((long)wait % 1000000) * 1000 }; nanosleep(&ts, NULL); }
        int c = i % nconn;
        int rlen = auth ? snprintf(req, sizeof req, "GET %s/%s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nAuthorization: %s\r\n\r\n", prefix, ids[i % nids], port, auth)
                        : snprintf(req, sizeof req, "GET %s/%s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n", prefix, ids[i % nids], port);
        double s = mono_us();
        int status = send_all(fds[c], req, rlen) == 0 ? read_response(fds[c]) : -1;
        end = mono_us();
        if (status == 200) lat[sent++] = (uint32_t)(end - s);
        else { errors++; if (status < 0) { close(fds[c]); fds[c] = dial(); } }
    }
    done(sent, errors, t0, end, lat, sent);
}

int main(int argc, char **argv) {
    take_short_slice();
    if (argc >= 5 && !strcmp(argv[2], "post")) { port = atoi(argv[1]); post(argv[3], atol(argv[4])); return 0; }
    if (argc >= 7 && !strcmp(argv[2], "get")) {
        port = atoi(argv[1]);
        get(argv[3], argv[4], atof(argv[5]), atof(argv[6]), argc > 7 ? atoi(argv[7]) : 4);
        return 0;
    }
    fprintf(stderr, "usage: httpseq PORT post PATH N | httpseq PORT get PATH_PREFIX IDS_FILE RATE SECONDS [CONNECTIONS]\n");
    return 2;
}
