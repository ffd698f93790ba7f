// The "roost-nowait" SQLite VFS (see roost_nowait_vfs.h): a shim over the
// default VFS whose files read the database and the WAL with RWF_NOWAIT.
#define _GNU_SOURCE
#include "roost_nowait_vfs.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sqlite3.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

const char *const roost_nowait_vfs_name = "roost-nowait";

/// One open file: our header, then the default VFS's own file object.
typedef struct {
    sqlite3_file base;   // pMethods: nowait_methods (or the real one's, for other files)
    int fd;              // our own read-only descriptor for RWF_NOWAIT reads; -1 when not wrapped
    sqlite3_file *real;  // the default VFS's file, right after this header
} nowait_file;

static sqlite3_vfs nowait_vfs;
static sqlite3_io_methods nowait_methods;
static sqlite3_vfs *real_vfs;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static int registered = SQLITE_ERROR;

#define REAL(f) (((nowait_file *)(f))->real)

static int nw_close(sqlite3_file *f) {
    nowait_file *n = (nowait_file *)f;
    if (n->fd >= 0) close(n->fd);
    int rc = n->real->pMethods ? n->real->pMethods->xClose(n->real) : SQLITE_OK;
    return rc;
}

static int nw_read(sqlite3_file *f, void *buf, int amt, sqlite3_int64 off) {
    nowait_file *n = (nowait_file *)f;
    if (n->fd < 0) return n->real->pMethods->xRead(n->real, buf, amt, off);
    struct iovec iov = { buf, (size_t)amt };
    ssize_t got = preadv2(n->fd, &iov, 1, (off_t)off, RWF_NOWAIT);
    if (got == amt) return SQLITE_OK;
    if (got < 0 && errno == EAGAIN) return SQLITE_IOERR_READ;  // not in the page cache: would wait
    if (got < 0 && errno != EOPNOTSUPP && errno != EINVAL) return SQLITE_IOERR_READ;
    // Past the end of the file (SQLite expects zeros and SQLITE_IOERR_SHORT_READ),
    // or RWF_NOWAIT not supported here: fail rather than wait, unless the
    // whole range lies past the end, which reads no page.
    struct stat st;
    if (got >= 0 && fstat(n->fd, &st) == 0 && off + got >= st.st_size) {
        memset((char *)buf + got, 0, (size_t)(amt - got));
        return SQLITE_IOERR_SHORT_READ;
    }
    return SQLITE_IOERR_READ;
}

static int nw_write(sqlite3_file *f, const void *buf, int amt, sqlite3_int64 off) { return REAL(f)->pMethods->xWrite(REAL(f), buf, amt, off); }
static int nw_truncate(sqlite3_file *f, sqlite3_int64 size) { return REAL(f)->pMethods->xTruncate(REAL(f), size); }
static int nw_sync(sqlite3_file *f, int flags) { return REAL(f)->pMethods->xSync(REAL(f), flags); }
static int nw_size(sqlite3_file *f, sqlite3_int64 *size) { return REAL(f)->pMethods->xFileSize(REAL(f), size); }
static int nw_lock(sqlite3_file *f, int level) { return REAL(f)->pMethods->xLock(REAL(f), level); }
static int nw_unlock(sqlite3_file *f, int level) { return REAL(f)->pMethods->xUnlock(REAL(f), level); }
static int nw_reserved(sqlite3_file *f, int *out) { return REAL(f)->pMethods->xCheckReservedLock(REAL(f), out); }
static int nw_control(sqlite3_file *f, int op, void *arg) {
    // No memory map through this VFS: every read goes through nw_read.
    if (op == SQLITE_FCNTL_MMAP_SIZE) { if (arg) *(sqlite3_int64 *)arg = 0; return SQLITE_OK; }
    return REAL(f)->pMethods->xFileControl(REAL(f), op, arg);
}
static int nw_sector(sqlite3_file *f) { return REAL(f)->pMethods->xSectorSize(REAL(f)); }
static int nw_device(sqlite3_file *f) { return REAL(f)->pMethods->xDeviceCharacteristics(REAL(f)); }
static int nw_shm_map(sqlite3_file *f, int page, int size, int extend, void volatile **out) {
    return REAL(f)->pMethods->xShmMap(REAL(f), page, size, extend, out);
}
static int nw_shm_lock(sqlite3_file *f, int offset, int n, int flags) { return REAL(f)->pMethods->xShmLock(REAL(f), offset, n, flags); }
static void nw_shm_barrier(sqlite3_file *f) { REAL(f)->pMethods->xShmBarrier(REAL(f)); }
static int nw_shm_unmap(sqlite3_file *f, int del) { return REAL(f)->pMethods->xShmUnmap(REAL(f), del); }

static int nw_open(sqlite3_vfs *vfs, sqlite3_filename name, sqlite3_file *f, int flags, int *out_flags) {
    (void)vfs;
    nowait_file *n = (nowait_file *)f;
    n->fd = -1;
    n->real = (sqlite3_file *)(n + 1);
    n->base.pMethods = NULL;
    int rc = real_vfs->xOpen(real_vfs, name, n->real, flags, out_flags);
    if (rc != SQLITE_OK) return rc;
    if (name && (flags & (SQLITE_OPEN_MAIN_DB | SQLITE_OPEN_WAL))) {
        n->fd = open(name, O_RDONLY | O_CLOEXEC);
        if (n->fd < 0) {
            n->real->pMethods->xClose(n->real);
            return SQLITE_CANTOPEN;
        }
    }
    n->base.pMethods = &nowait_methods;
    return SQLITE_OK;
}

static void setup(void) {
    real_vfs = sqlite3_vfs_find(NULL);
    if (!real_vfs || real_vfs->iVersion < 2) return;
    nowait_methods = (sqlite3_io_methods){
        .iVersion = 2, .xClose = nw_close, .xRead = nw_read, .xWrite = nw_write, .xTruncate = nw_truncate,
        .xSync = nw_sync, .xFileSize = nw_size, .xLock = nw_lock, .xUnlock = nw_unlock,
        .xCheckReservedLock = nw_reserved, .xFileControl = nw_control, .xSectorSize = nw_sector,
        .xDeviceCharacteristics = nw_device, .xShmMap = nw_shm_map, .xShmLock = nw_shm_lock,
        .xShmBarrier = nw_shm_barrier, .xShmUnmap = nw_shm_unmap};
    nowait_vfs = *real_vfs;
    nowait_vfs.zName = roost_nowait_vfs_name;
    nowait_vfs.szOsFile = (int)sizeof(nowait_file) + real_vfs->szOsFile;
    nowait_vfs.xOpen = nw_open;
    nowait_vfs.pNext = NULL;
    registered = sqlite3_vfs_register(&nowait_vfs, 0);
}

int roost_nowait_vfs_register(void) {
    pthread_once(&once, setup);
    return registered;
}
