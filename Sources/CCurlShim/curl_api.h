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

/// What every request roostd makes sets on its easy handle (roost_curl_setup).
/// NULL callbacks and user agent are left unset.
struct roost_curl_options {
    const char *url;
    /// "http,https" for HTTP, "smtp,smtps" for mail.
    const char *protocols;
    long timeout_ms, connect_timeout_ms;
    const char *user_agent;
    struct curl_slist *headers;
    curl_write_callback body;
    void *body_data;
    curl_write_callback header;
    void *header_data;
    /// CURL_ERROR_SIZE bytes; emptied here.
    char *errbuf;
};

/// Sets the URL, the protocols, the timeouts, no signals, no redirects, the
/// user agent, the header lines, where the body and header lines go and the
/// error buffer: the part of a handle's setup every request shares.
void roost_curl_setup(CURL *curl, const struct roost_curl_options *o);

/// The header lines as a libcurl list; with `no_expect`, an empty "Expect:"
/// too, so a body goes out at once rather than after 100-continue.
struct curl_slist *roost_curl_header_list(const char *const *headers, size_t count, int no_expect);

/// The delta-seconds of a `Retry-After:` header line, or -1 when the line is
/// another header or has no number.
long roost_curl_retry_after(const char *line, size_t len);

/// Why a transfer failed: libcurl's error buffer, else the code's text.
const char *roost_curl_reason(CURLcode rc, const char *errbuf);
#endif
