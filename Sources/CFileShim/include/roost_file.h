#ifndef ROOST_FILE_H
#define ROOST_FILE_H
#include <stddef.h>
#include <stdint.h>

/// How many of the pages of `length` bytes at `offset` of `fd` are in the
/// page cache, and how many pages the range spans, with Linux's cachestat(2)
/// (one system call, no mapping). Returns 0, or -1 with errno (ENOSYS on
/// kernels before 6.5: the caller falls back to mmap + mincore).
int roost_cached_pages(int fd, uint64_t offset, uint64_t length, uint64_t *cached, uint64_t *pages);

#endif
