/* sseclient's answers to REPORT, COUNT and RESET (see bench/sseclient.c). */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

#include "sseclient.h"

static int cmp_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

void report(void) {
    long mn = -1, mx = 0;
    for (int i = 0; i < nconns; i++) {
        if (!conns[i].got_ready) continue;
        if (mn < 0 || conns[i].events < mn) mn = conns[i].events;
        if (conns[i].events > mx) mx = conns[i].events;
    }
    uint32_t p50 = 0, p90 = 0, p99 = 0, pmax = 0;
    if (nlat) {
        qsort(lats, nlat, sizeof *lats, cmp_u32);
        p50 = lats[nlat / 2]; p90 = lats[(size_t)(nlat * 0.90)]; p99 = lats[(size_t)(nlat * 0.99)];
        pmax = lats[nlat - 1];
    }
    struct rusage ru; getrusage(RUSAGE_SELF, &ru);
    double cpu = ru.ru_utime.tv_sec + ru.ru_stime.tv_sec + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
    printf("REPORT events=%zu lat_p50_us=%u lat_p90_us=%u lat_p99_us=%u lat_max_us=%u per_conn_min=%ld per_conn_max=%ld "
           "first_ms=%.1f last_ms=%.1f open=%d closed=%d cpu_s=%.3f heartbeats=%ld\n",
           nlat, p50, p90, p99, pmax, mn < 0 ? 0 : mn, mx, first_ms, last_ms, n_open, n_closed, cpu, heartbeats);
    fflush(stdout);
}

static double cpu_seconds(void) {
    struct rusage ru; getrusage(RUSAGE_SELF, &ru);
    return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

void count(void) {
    printf("COUNT events=%zu open=%d closed=%d cpu_s=%.3f\n", nlat, n_open, n_closed, cpu_seconds());
    fflush(stdout);
}

void reset(void) {
    nlat = 0; first_ms = last_ms = 0;
    for (int i = 0; i < nconns; i++) conns[i].events = 0;
}
