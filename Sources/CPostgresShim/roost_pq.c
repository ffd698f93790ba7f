// The libpq functions StorePostgres calls, defined here as trampolines: the
// first call loads libpq.so.5 (dlopen, once, under pthread_once) and each
// forwards to libpq's own function through a pointer found by dlsym. The
// prototypes come from libpq-fe.h, so a trampoline whose signature drifted
// from libpq's does not compile. They are hidden: libpq's internal calls
// never land here, and nothing outside this binary sees them.
#include "roost_pq.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#pragma GCC visibility push(hidden)
#include <postgresql/libpq-fe.h>

// Each function: return type, name, parameters, arguments, the value when libpq is not loaded.
#define ROOST_PQ_FUNCTIONS(X) \
    X(PGconn *, PQconnectdb, (const char *conninfo), (conninfo), NULL) \
    X(PGconn *, PQconnectStart, (const char *conninfo), (conninfo), NULL) \
    X(PostgresPollingStatusType, PQconnectPoll, (PGconn *conn), (conn), PGRES_POLLING_FAILED) \
    X(ConnStatusType, PQstatus, (const PGconn *conn), (conn), CONNECTION_BAD) \
    X(char *, PQerrorMessage, (const PGconn *conn), (conn), (char *)"libpq is not loaded") \
    X(PQnoticeProcessor, PQsetNoticeProcessor, (PGconn *conn, PQnoticeProcessor proc, void *arg), (conn, proc, arg), NULL) \
    X(PGresult *, PQexec, (PGconn *conn, const char *query), (conn, query), NULL) \
    X(PGresult *, PQexecPrepared, (PGconn *conn, const char *stmtName, int nParams, const char *const *paramValues, \
                                   const int *paramLengths, const int *paramFormats, int resultFormat), \
      (conn, stmtName, nParams, paramValues, paramLengths, paramFormats, resultFormat), NULL) \
    X(ExecStatusType, PQresultStatus, (const PGresult *res), (res), PGRES_FATAL_ERROR) \
    X(char *, PQresultErrorField, (const PGresult *res, int fieldcode), (res, fieldcode), NULL) \
    X(int, PQntuples, (const PGresult *res), (res), 0) \
    X(int, PQnfields, (const PGresult *res), (res), 0) \
    X(char *, PQgetvalue, (const PGresult *res, int tup_num, int field_num), (res, tup_num, field_num), NULL) \
    X(int, PQgetisnull, (const PGresult *res, int tup_num, int field_num), (res, tup_num, field_num), 1) \
    X(int, PQgetlength, (const PGresult *res, int tup_num, int field_num), (res, tup_num, field_num), 0) \
    X(char *, PQcmdTuples, (PGresult *res), (res), (char *)"") \
    X(PGTransactionStatusType, PQtransactionStatus, (const PGconn *conn), (conn), PQTRANS_UNKNOWN) \
    X(int, PQserverVersion, (const PGconn *conn), (conn), 0) \
    X(int, PQbackendPID, (const PGconn *conn), (conn), 0) \
    X(int, PQsocket, (const PGconn *conn), (conn), -1) \
    X(int, PQconsumeInput, (PGconn *conn), (conn), 0) \
    X(PGnotify *, PQnotifies, (PGconn *conn), (conn), NULL) \
    X(int, PQenterPipelineMode, (PGconn *conn), (conn), 0) \
    X(int, PQexitPipelineMode, (PGconn *conn), (conn), 0) \
    X(int, PQpipelineSync, (PGconn *conn), (conn), 0) \
    X(int, PQsendQueryParams, (PGconn *conn, const char *command, int nParams, const Oid *paramTypes, \
                               const char *const *paramValues, const int *paramLengths, const int *paramFormats, int resultFormat), \
      (conn, command, nParams, paramTypes, paramValues, paramLengths, paramFormats, resultFormat), 0) \
    X(int, PQsendPrepare, (PGconn *conn, const char *stmtName, const char *query, int nParams, const Oid *paramTypes), \
      (conn, stmtName, query, nParams, paramTypes), 0) \
    X(int, PQsendQueryPrepared, (PGconn *conn, const char *stmtName, int nParams, const char *const *paramValues, \
                                 const int *paramLengths, const int *paramFormats, int resultFormat), \
      (conn, stmtName, nParams, paramValues, paramLengths, paramFormats, resultFormat), 0) \
    X(PGresult *, PQgetResult, (PGconn *conn), (conn), NULL)

// The functions that return nothing: name, parameters, arguments.
#define ROOST_PQ_PROCEDURES(X) \
    X(PQfinish, (PGconn *conn), (conn)) \
    X(PQreset, (PGconn *conn), (conn)) \
    X(PQclear, (PGresult *res), (res)) \
    X(PQfreemem, (void *ptr), (ptr))

#define ROOST_PQ_POINTER(type, name, params, args, fallback) static type(*p_##name) params;
ROOST_PQ_FUNCTIONS(ROOST_PQ_POINTER)
#undef ROOST_PQ_POINTER
#define ROOST_PQ_PROCEDURE_POINTER(name, params, args) static void(*p_##name) params;
ROOST_PQ_PROCEDURES(ROOST_PQ_PROCEDURE_POINTER)
#undef ROOST_PQ_PROCEDURE_POINTER

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static int loaded = 0;
static char load_error[512] = "libpq was not loaded";

static const char *library(void) {
    const char *name = getenv("ROOST_LIBPQ");
    return name && *name ? name : "libpq.so.5";
}

static void load(void) {
    const char *name = library();
    void *handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        const char *why = dlerror();
        snprintf(load_error, sizeof load_error, "libpq cannot be loaded: %s could not be opened (%s); install libpq5 to use PostgreSQL",
                 name, why ? why : "unknown error");
        return;
    }
#define ROOST_PQ_RESOLVE(type, fn, params, args, fallback) \
    *(void **)&p_##fn = dlsym(handle, #fn); \
    if (!p_##fn) { \
        snprintf(load_error, sizeof load_error, "libpq cannot be loaded: %s has no " #fn, name); \
        dlclose(handle); \
        return; \
    }
#define ROOST_PQ_RESOLVE_PROCEDURE(fn, params, args) ROOST_PQ_RESOLVE(void, fn, params, args, )
    ROOST_PQ_FUNCTIONS(ROOST_PQ_RESOLVE)
    ROOST_PQ_PROCEDURES(ROOST_PQ_RESOLVE_PROCEDURE)
#undef ROOST_PQ_RESOLVE_PROCEDURE
#undef ROOST_PQ_RESOLVE
    __atomic_store_n(&loaded, 1, __ATOMIC_RELEASE);
}

static int ready(void) {
    pthread_once(&load_once, load);
    return __atomic_load_n(&loaded, __ATOMIC_ACQUIRE);
}

int roost_pq_load(char *err, size_t errlen) {
    if (ready()) return 0;
    if (err && errlen > 0) snprintf(err, errlen, "%s", load_error);
    return -1;
}

// The trampolines. A call before a successful load answers the function's
// harmless value (no connection, no rows); PGConnection loads libpq before
// its first PQconnectdb and reports a failure as a PGError.
#define ROOST_PQ_TRAMPOLINE(type, name, params, args, fallback) \
    type name params { \
        if (!ready()) return fallback; \
        return p_##name args; \
    }
ROOST_PQ_FUNCTIONS(ROOST_PQ_TRAMPOLINE)
#undef ROOST_PQ_TRAMPOLINE
#define ROOST_PQ_PROCEDURE_TRAMPOLINE(name, params, args) \
    void name params { \
        if (ready()) p_##name args; \
    }
ROOST_PQ_PROCEDURES(ROOST_PQ_PROCEDURE_TRAMPOLINE)
#undef ROOST_PQ_PROCEDURE_TRAMPOLINE

#pragma GCC visibility pop
