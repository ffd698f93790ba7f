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

/// A POST of `application/x-www-form-urlencoded` `body` that keeps the answer's
/// body (at most max_bytes; free it with roost_curl_free): OAuth token endpoints.
int roost_curl_post_form(const char *url, const char *body, size_t body_len, long timeout_ms, size_t max_bytes,
                         char **answer, size_t *answer_len, roost_curl_result *out);

/// GETs `url` (http or https; no redirects), keeping at most `max_bytes` of
/// the body in `*body` (malloc'd, NUL-terminated; free with roost_curl_free)
/// and the Cache-Control header in `cache_control`. Returns 0 when a
/// response arrived (status in `out->status`), -1 on a transport error or a
/// body over `max_bytes`.
int roost_curl_get(const char *url, long timeout_ms, size_t max_bytes, char **body, size_t *body_len,
                   char *cache_control, size_t cache_control_len, roost_curl_result *out);

void roost_curl_free(void *p);

/// How an smtp:// connection uses TLS (STARTTLS); smtps:// is TLS from the start.
typedef enum { ROOST_SMTP_TLS_OFF = 0, ROOST_SMTP_TLS_TRY = 1, ROOST_SMTP_TLS_REQUIRE = 2 } roost_smtp_tls;

/// Sends one message by SMTP (`url` smtp://host:port or smtps://host:port):
/// MAIL FROM `from`, RCPT TO `recipient`, DATA `message` (whole, CRLF line
/// ends). `username`/`password` may be NULL (no AUTH). Waits at most
/// `timeout_ms`. Returns 0 when the server accepted the message, else -1
/// with the reason in `out->error` and the last SMTP reply code in
/// `out->status` (0 when none arrived).
///
/// `session` (may be NULL: one connection per message) keeps the connection
/// open for the next message to the same server: `*session` starts NULL, is
/// set on first use, and is dropped (and set NULL) after a failure so the next
/// message starts afresh. Close it with `roost_curl_smtp_close`. One thread
/// at a time per session.
int roost_curl_smtp(const char *url, const char *from, const char *recipient, const char *message, size_t message_len,
                    const char *username, const char *password, roost_smtp_tls tls, long timeout_ms,
                    void **session, roost_curl_result *out);

/// Ends an SMTP session (QUIT, close); NULL is fine.
void roost_curl_smtp_close(void *session);

#ifdef __cplusplus
}
#endif
#endif
