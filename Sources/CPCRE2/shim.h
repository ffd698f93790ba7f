#ifndef ROOST_CPCRE2_SHIM_H
#define ROOST_CPCRE2_SHIM_H
// PCRE2 is what MongoDB's $regex uses; Roost uses the 8-bit (UTF-8) library.
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#endif
