#define _GNU_SOURCE
#include "roost_file.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Older kernel headers (Debian 12's) do not name it; the number is the same
   on every architecture that uses the generic syscall table and on x86-64. */
#ifndef __NR_cachestat
#define __NR_cachestat 451
#endif

struct roost_cachestat_range { uint64_t off; uint64_t len; };
struct roost_cachestat {
    uint64_t nr_cache, nr_dirty, nr_writeback, nr_evicted, nr_recently_evicted;
};

int roost_cached_pages(int fd, uint64_t offset, uint64_t length, uint64_t *cached, uint64_t *pages) {
    long page = sysconf(_SC_PAGESIZE);
    if (page <= 0 || length == 0) { errno = EINVAL; return -1; }
    uint64_t first = offset / (uint64_t)page, last = (offset + length - 1) / (uint64_t)page;
    struct roost_cachestat_range range = { first * (uint64_t)page, (last - first + 1) * (uint64_t)page };
    struct roost_cachestat stat = {0};
    if (syscall(__NR_cachestat, fd, &range, &stat, 0) != 0) return -1;
    *cached = stat.nr_cache;
    *pages = last - first + 1;
    return 0;
}

int roost_open_unnamed(const char *directory, unsigned int mode) {
    return open(directory, O_TMPFILE | O_WRONLY | O_CLOEXEC, (mode_t)mode);
}

int roost_open_scratch(const char *directory, unsigned int mode) {
    return open(directory, O_TMPFILE | O_RDWR | O_CLOEXEC, (mode_t)mode);
}

int roost_link_unnamed(int fd, const char *path) {
    char self[64];
    snprintf(self, sizeof self, "/proc/self/fd/%d", fd);
    return linkat(AT_FDCWD, self, AT_FDCWD, path, AT_SYMLINK_FOLLOW);
}

int roost_syncfs(int fd) {
    return syncfs(fd);
}

/* From linux/ioprio.h, which Debian 12's headers do not make usable here. */
#define ROOST_IOPRIO_WHO_PROCESS 1
#define ROOST_IOPRIO_CLASS_SHIFT 13
#define ROOST_IOPRIO_CLASS_BE 2

int roost_lower_thread_priority(int nice, int *old_nice, int *old_ioprio) {
    pid_t tid = (pid_t)syscall(SYS_gettid);
    errno = 0;
    int before = getpriority(PRIO_PROCESS, (id_t)tid);
    if (before == -1 && errno != 0) return -1;
    *old_nice = before;
    long io = syscall(SYS_ioprio_get, ROOST_IOPRIO_WHO_PROCESS, tid);
    *old_ioprio = io < 0 ? -1 : (int)io;
    if (nice > before && setpriority(PRIO_PROCESS, (id_t)tid, nice) != 0) return -1;
    syscall(SYS_ioprio_set, ROOST_IOPRIO_WHO_PROCESS, tid, (ROOST_IOPRIO_CLASS_BE << ROOST_IOPRIO_CLASS_SHIFT) | 7);
    // SCHED_IDLE: the thread runs only on CPU time nothing else wants.
    struct sched_param none = {0};
    sched_setscheduler(tid, SCHED_IDLE, &none);
    return 0;
}

void roost_restore_thread_priority(int old_nice, int old_ioprio) {
    pid_t tid = (pid_t)syscall(SYS_gettid);
    struct sched_param none = {0};
    sched_setscheduler(tid, SCHED_OTHER, &none);
    setpriority(PRIO_PROCESS, (id_t)tid, old_nice);
    if (old_ioprio >= 0) syscall(SYS_ioprio_set, ROOST_IOPRIO_WHO_PROCESS, tid, old_ioprio);
}

int roost_start_writeback(int fd) {
    return sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE);
}

void roost_drop_cache(int fd) {
    posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
}

/* struct sched_attr from linux/sched/types.h (glibc 2.36 declares no wrapper). */
struct roost_sched_attr {
    uint32_t size, sched_policy;
    uint64_t sched_flags;
    int32_t sched_nice;
    uint32_t sched_priority;
    uint64_t sched_runtime, sched_deadline, sched_period;
    uint32_t sched_util_min, sched_util_max;
};

int roost_set_thread_slice(uint64_t nanoseconds) {
    pid_t tid = (pid_t)syscall(SYS_gettid);
    int policy = sched_getscheduler(tid);
    if (policy != SCHED_OTHER && policy != SCHED_BATCH) { errno = EINVAL; return -1; }
    errno = 0;
    int nice = getpriority(PRIO_PROCESS, (id_t)tid);
    if (nice == -1 && errno != 0) return -1;
    struct roost_sched_attr attr = {0};
    attr.size = sizeof attr;
    attr.sched_policy = (uint32_t)policy;
    attr.sched_nice = nice;  /* sched_setattr sets the nice value too: keep it */
    attr.sched_runtime = nanoseconds;
    return (int)syscall(SYS_sched_setattr, tid, &attr, 0);
}
