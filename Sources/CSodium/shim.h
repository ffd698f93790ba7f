#ifndef ROOST_CSODIUM_SHIM_H
#define ROOST_CSODIUM_SHIM_H
#include <sodium.h>
#endif
