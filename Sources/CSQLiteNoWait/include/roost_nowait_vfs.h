#ifndef ROOST_NOWAIT_VFS_H
#define ROOST_NOWAIT_VFS_H

/// Registers the SQLite VFS "roost-nowait" (once; later calls do nothing):
/// the default unix VFS, except that reading the main database or its WAL
/// never waits for the disk. A read is served from the kernel's page cache
/// with preadv2(RWF_NOWAIT); a page that is not there fails the read with
/// SQLITE_IOERR_READ at once instead of blocking. Event loops read through it
/// (their own connections, with no memory map): a read that would wait is
/// handed to a reader thread instead. Returns an SQLite result code.
int roost_nowait_vfs_register(void);

/// The VFS's name, for sqlite3_open_v2.
extern const char *const roost_nowait_vfs_name;

#endif
