#ifndef ROOST_CSQLITE_SHIM_H
#define ROOST_CSQLITE_SHIM_H
#include <sqlite3.h>

/// Process-wide settings, before the first connection opens (sqlite3_config
/// is variadic, which Swift cannot call). Memory statistics off: with them
/// on, every SQLite allocation takes one global mutex that all reader
/// threads and the writer share. No bulk page-cache allocation per
/// connection (SQLite's default takes 20 pages, about 88 KiB, at a
/// connection's first read, touched whether used or not): pages are
/// allocated as they are read. Returns SQLITE_MISUSE if SQLite is already
/// initialised, which leaves its defaults in place.
static inline int roost_sqlite_configure(void) {
    int rc = sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
    int bulk = sqlite3_config(SQLITE_CONFIG_PAGECACHE, (void *)0, 0, 0);
    return rc != SQLITE_OK ? rc : bulk;
}
#endif
