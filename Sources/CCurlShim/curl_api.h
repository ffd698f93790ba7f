#ifndef ROOST_CURL_API_H
#define ROOST_CURL_API_H
// Internal: the libcurl functions roost_curl_start loaded with dlsym, shared
// by webhook delivery (roost_curl.c), the S3 client (roost_s3.c) and push (roost_h2.c).
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
    // The multi interface, for HTTP/2 multiplexing (roost_h2.c).
    __typeof__(curl_multi_init) *multi_init;
    __typeof__(curl_multi_setopt) *multi_setopt;
    __typeof__(curl_multi_add_handle) *multi_add_handle;
    __typeof__(curl_multi_remove_handle) *multi_remove_handle;
    __typeof__(curl_multi_perform) *multi_perform;
    __typeof__(curl_multi_poll) *multi_poll;
    __typeof__(curl_multi_info_read) *multi_info_read;
    __typeof__(curl_multi_cleanup) *multi_cleanup;
};

/// Filled by roost_curl_start; valid once it returned 0.
extern struct roost_curl_api roost_curl_fns;
#define api roost_curl_fns
#endif
