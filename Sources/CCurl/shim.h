#ifndef ROOST_CCURL_SHIM_H
#define ROOST_CCURL_SHIM_H
#include <curl/curl.h>
#endif
