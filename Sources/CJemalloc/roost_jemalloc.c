#include "roost_jemalloc.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Declared here rather than through jemalloc.h, which would also rename malloc. */
int mallctl(const char *name, void *oldp, size_t *oldlenp, void *newp, size_t newlen);

/* jemalloc's options, read at its initialisation (the MALLOC_CONF environment
   variable still overrides them). Freed pages go back to the kernel within
   1 s instead of 10 s: a burst of large buffers (log-ins, image decoding)
   does not keep the daemon's resident size up for long. jemalloc only acts
   on that decay when the arena is used again, so a background thread does
   it: after a burst of writes and large lists, an idle daemon went back to
   100 MiB in 8 s with it, and stayed at 117 MiB without (docs/MEMORY.md).
   One such thread is enough. */
const char *malloc_conf = "dirty_decay_ms:1000,muzzy_decay_ms:1000,background_thread:true,max_background_threads:1";

const char *roost_jemalloc_version(void) {
    const char *version = NULL;
    size_t length = sizeof version;
    if (mallctl("version", &version, &length, NULL, 0) != 0) return NULL;
    return version;
}

long roost_jemalloc_dirty_decay_ms(void) {
    ssize_t value = -2;
    size_t length = sizeof value;
    if (mallctl("arenas.dirty_decay_ms", &value, &length, NULL, 0) != 0) return -2;
    return (long)value;
}

int roost_jemalloc_stats(size_t *allocated, size_t *resident, size_t *metadata, size_t *mapped) {
    uint64_t epoch = 1;
    size_t length = sizeof epoch;
    /* Totals are cached; advancing the epoch refreshes them. */
    if (mallctl("epoch", &epoch, &length, &epoch, length) != 0) return -1;
    const char *names[] = {"stats.allocated", "stats.resident", "stats.metadata", "stats.mapped"};
    size_t *values[] = {allocated, resident, metadata, mapped};
    for (int i = 0; i < 4; i++) {
        length = sizeof(size_t);
        if (mallctl(names[i], values[i], &length, NULL, 0) != 0) return -1;
    }
    return 0;
}
