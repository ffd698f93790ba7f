#ifndef ROOST_CURL_H
#define ROOST_CURL_H
// One non-variadic call around libcurl's easy interface (Swift cannot call
// the variadic curl_easy_setopt). Used by webhook delivery on worker threads.
// roostd does not link libcurl: the first POST loads it.
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/// What one POST produced.
typedef struct {
    /// The HTTP status, or 0 when no response arrived.
    long status;
    /// The response's Retry-After header in seconds, or -1 when absent or not a number.
    long retry_after;
    /// A short description of a transport failure (empty on success).
    char error[256];
} roost_curl_result;

/// Loads libcurl.so.4 (dlopen) and initialises it, once per process; safe
/// from any thread. Returns 0, or -1 with the reason in `err`. A failure is
/// final for the process. roost_curl_post calls it first.
int roost_curl_start(char *err, size_t errlen);

/// POSTs `body` to `url` with `headers` ("Name: value" strings), waiting at
/// most `timeout_ms`. Never follows redirects. Returns 0 when a response
/// arrived (any status), -1 on a transport error (see `out->error`).
int roost_curl_post(const char *url, const char *const *headers, size_t header_count,
                    const void *body, size_t body_len, long timeout_ms, roost_curl_result *out);

#ifdef __cplusplus
}
#endif
#endif
