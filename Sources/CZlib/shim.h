#ifndef ROOST_CZLIB_SHIM_H
#define ROOST_CZLIB_SHIM_H
#include <zlib.h>
#endif
