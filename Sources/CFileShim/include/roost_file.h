#ifndef ROOST_FILE_H
#define ROOST_FILE_H
#include <stddef.h>
#include <stdint.h>

/// How many of the pages of `length` bytes at `offset` of `fd` are in the
/// page cache, and how many pages the range spans, with Linux's cachestat(2)
/// (one system call, no mapping). Returns 0, or -1 with errno (ENOSYS on
/// kernels before 6.5: the caller falls back to mmap + mincore).
int roost_cached_pages(int fd, uint64_t offset, uint64_t length, uint64_t *cached, uint64_t *pages);

/// Opens an unnamed file in `directory` (O_TMPFILE) for writing: it has no
/// name until `roost_link_unnamed` gives it one, so a crash before that
/// leaves nothing behind. Returns the descriptor, or -1 with errno
/// (EOPNOTSUPP or EISDIR where the file system cannot).
int roost_open_unnamed(const char *directory, unsigned int mode);

/// Gives the unnamed file `fd` the name `path` (linkat through
/// /proc/self/fd, which needs no privilege). Fails with EEXIST if `path`
/// exists: it never replaces a file.
int roost_link_unnamed(int fd, const char *path);

/// Flushes everything written to the file system holding `fd` (syncfs(2),
/// which glibc declares only under _GNU_SOURCE). Returns 0, or -1 with errno.
int roost_syncfs(int fd);

#endif
