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

/// An unnamed scratch file in `directory`, open for reading and writing
/// (O_TMPFILE | O_RDWR); it vanishes when closed. -1 with errno otherwise.
int roost_open_scratch(const char *directory, unsigned int mode);

/// Gives the unnamed file `fd` the name `path` (linkat through
/// /proc/self/fd, which needs no privilege). Fails with EEXIST if `path`
/// exists: it never replaces a file.
int roost_link_unnamed(int fd, const char *path);

/// Flushes everything written to the file system holding `fd` (syncfs(2),
/// which glibc declares only under _GNU_SOURCE). Returns 0, or -1 with errno.
int roost_syncfs(int fd);

/// Lowers the calling thread's CPU priority to `SCHED_IDLE` (it runs only on
/// CPU time no other thread wants) at nice `nice`, and its I/O
/// priority to the lowest of the best-effort class (ioprio_set(2), which
/// glibc does not wrap; honoured by the BFQ scheduler, ignored by others).
/// Stores the previous values in `old_nice` and `old_ioprio` for
/// `roost_restore_thread_priority`. Returns 0, or -1 with errno.
int roost_lower_thread_priority(int nice, int *old_nice, int *old_ioprio);

/// Puts back what `roost_lower_thread_priority` saved (raising a nice value
/// back may be refused without CAP_SYS_NICE; then it stays lowered).
void roost_restore_thread_priority(int old_nice, int old_ioprio);

/// Gives the calling thread an EEVDF time slice of `nanoseconds` (sched_setattr's
/// sched_runtime for SCHED_OTHER, Linux 6.12+; the kernel clamps it to
/// 0.1–100 ms), keeping its policy and nice value. A thread with a shorter
/// slice than the running one gets the CPU as soon as it wakes, instead of
/// when the running thread's slice ends (up to a 4 ms tick here). Returns 0,
/// or -1 with errno; an older kernel accepts the call and ignores the slice.
/// 0 gives back the kernel's default slice (a new thread inherits its creator's).
int roost_set_thread_slice(uint64_t nanoseconds);

/// Starts writing back the dirty pages of `fd` without waiting for them
/// (sync_file_range(2) with SYNC_FILE_RANGE_WRITE), so that a later fsync
/// or syncfs finds most of the work done. Returns 0, or -1 with errno.
int roost_start_writeback(int fd);

/// Tells the kernel the cached pages of `fd` will not be needed again
/// (posix_fadvise DONTNEED; dirty ones are written back first).
void roost_drop_cache(int fd);

#endif
