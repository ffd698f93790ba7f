#ifndef ROOST_CJEMALLOC_SHIM_H
#define ROOST_CJEMALLOC_SHIM_H
#include <stddef.h>
#include <sys/types.h>
#include <stdio.h>
#include <errno.h>

/* jemalloc replaces malloc for the whole process once it is linked (the
   daemon hands buffers between loop and worker threads all the time, which
   glibc's per-thread caches serve badly). Only its control entry point is
   declared here, to read its version; jemalloc.h would also rename malloc. */
int mallctl(const char *name, void *oldp, size_t *oldlenp, void *newp, size_t newlen);

/// Has freed pages handed back to the kernel within `milliseconds` (jemalloc
/// keeps them 10 s by default), for new arenas and for each existing one.
/// Returns 0, or an errno value.
static inline int roost_jemalloc_set_decay(long milliseconds) {
    ssize_t value = milliseconds;
    int rc = mallctl("arenas.dirty_decay_ms", NULL, NULL, &value, sizeof value);
    if (rc == 0) rc = mallctl("arenas.muzzy_decay_ms", NULL, NULL, &value, sizeof value);
    unsigned arenas = 0;
    size_t length = sizeof arenas;
    if (rc == 0) rc = mallctl("arenas.narenas", &arenas, &length, NULL, 0);
    if (arenas == 0) arenas = 1; /* arena 0 exists from the first allocation */
    for (unsigned i = 0; rc == 0 && i < arenas; i++) {
        char name[64];
        snprintf(name, sizeof name, "arena.%u.dirty_decay_ms", i);
        rc = mallctl(name, NULL, NULL, &value, sizeof value);
        /* An arena not initialised yet will take the new default. */
        if (rc == EFAULT) rc = 0;
        if (rc == 0) {
            snprintf(name, sizeof name, "arena.%u.muzzy_decay_ms", i);
            rc = mallctl(name, NULL, NULL, &value, sizeof value);
            if (rc == EFAULT) rc = 0;
        }
    }
    return rc;
}

/// jemalloc's version string, or NULL.
static inline const char *roost_jemalloc_version(void) {
    const char *version = NULL;
    size_t length = sizeof version;
    if (mallctl("version", &version, &length, NULL, 0) != 0) return NULL;
    return version;
}
#endif
