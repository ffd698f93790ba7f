#ifndef ROOST_JEMALLOC_H
#define ROOST_JEMALLOC_H

/* jemalloc replaces malloc for the whole process once it is linked: the
   daemon hands buffers between loop and worker threads all the time, which
   glibc's per-thread caches serve badly. roost_jemalloc.c also sets its
   options (malloc_conf), which it reads before its first allocation. */

/// jemalloc's version string, or NULL when jemalloc is not the allocator.
const char *roost_jemalloc_version(void);

/// The dirty-page decay of new arenas in milliseconds, or -2 when it
/// cannot be read.
long roost_jemalloc_dirty_decay_ms(void);

#include <stddef.h>

/// jemalloc's totals in bytes: allocated by the program, resident (pages it
/// holds, including freed ones not yet returned), its own metadata, and
/// mapped. Returns 0, or -1 when jemalloc is not the allocator.
int roost_jemalloc_stats(size_t *allocated, size_t *resident, size_t *metadata, size_t *mapped);

#endif
