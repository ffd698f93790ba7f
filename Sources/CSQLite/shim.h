#ifndef ROOST_CSQLITE_SHIM_H
#define ROOST_CSQLITE_SHIM_H
#include <sqlite3.h>
#endif
