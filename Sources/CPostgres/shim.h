#ifndef ROOST_CPOSTGRES_SHIM_H
#define ROOST_CPOSTGRES_SHIM_H
// libpq's header only: its types, constants and prototypes. roostd does not
// link libpq; the functions are CPostgresShim's trampolines, which load
// libpq.so.5 with dlopen at the first connection (docs/ENGINES.md).
#include <postgresql/libpq-fe.h>
#endif
