#ifndef ROOST_CPOSTGRES_SHIM_H
#define ROOST_CPOSTGRES_SHIM_H
#include <libpq-fe.h>
#endif
