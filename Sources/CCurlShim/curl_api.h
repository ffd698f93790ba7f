#ifndef ROOST_CURL_API_H
#define ROOST_CURL_API_H
// Internal: the libcurl functions roost_curl_start loaded with dlsym, shared
// by webhook delivery (roost_curl.c) and the S3 client (roost_s3.c).
#define CURL_DISABLE_TYPECHECK 1
#include <curl/curl.h>

struct roost_curl_api {
    __typeof__(curl_global_init) *global_init;
    __typeof__(curl_easy_init) *easy_init;
    __typeof__(curl_easy_setopt) *easy_setopt;
    __typeof__(curl_easy_perform) *easy_perform;
    __typeof__(curl_easy_getinfo) *easy_getinfo;
    __typeof__(curl_easy_strerror) *easy_strerror;
    __typeof__(curl_easy_cleanup) *easy_cleanup;
    __typeof__(curl_easy_reset) *easy_reset;
    __typeof__(curl_slist_append) *slist_append;
    __typeof__(curl_slist_free_all) *slist_free_all;
};

/// Filled by roost_curl_start; valid once it returned 0.
extern struct roost_curl_api roost_curl_fns;
#define api roost_curl_fns
#endif
