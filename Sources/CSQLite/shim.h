#ifndef ROOST_CSQLITE_SHIM_H
#define ROOST_CSQLITE_SHIM_H
#include <sqlite3.h>

/// Process-wide settings, before the first connection opens (sqlite3_config
/// is variadic, which Swift cannot call). Memory statistics off: with them
/// on, every SQLite allocation takes one global mutex that all reader
/// threads and the writer share. Returns SQLITE_MISUSE if SQLite is
/// already initialised, which leaves its defaults in place.
static inline int roost_sqlite_configure(void) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}
#endif
