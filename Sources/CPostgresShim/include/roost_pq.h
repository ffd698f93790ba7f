#ifndef ROOST_PQ_H
#define ROOST_PQ_H
// Loads libpq at the first PostgreSQL connection (dlopen), so a daemon that
// never connects maps none of libpq's libraries (GSSAPI, LDAP, ...).
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Loads libpq (libpq.so.5, or the file named by ROOST_LIBPQ) and every
/// function Roost calls, once per process; safe from any thread. Returns 0,
/// or -1 with the reason in `err`. A failure is final for the process.
int roost_pq_load(char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
