#ifndef ROOST_CJEMALLOC_SHIM_H
#define ROOST_CJEMALLOC_SHIM_H
#include <stddef.h>

/* jemalloc replaces malloc for the whole process once it is linked (the
   daemon hands buffers between loop and worker threads all the time, which
   glibc's per-thread caches serve badly). Only its control entry point is
   declared here, to read its version; jemalloc.h would also rename malloc. */
int mallctl(const char *name, void *oldp, size_t *oldlenp, void *newp, size_t newlen);

/// jemalloc's version string, or NULL.
static inline const char *roost_jemalloc_version(void) {
    const char *version = NULL;
    size_t length = sizeof version;
    if (mallctl("version", &version, &length, NULL, 0) != 0) return NULL;
    return version;
}
#endif
