#ifndef ROOST_S3_H
#define ROOST_S3_H
// One non-variadic S3 request through libcurl, signed by libcurl's own AWS
// SigV4 (CURLOPT_AWS_SIGV4). The Swift S3 client builds PUT, GET (Range),
// DELETE, HEAD, list and multipart calls on it. libcurl is loaded on the
// first call (roost_curl_start), never at start-up.
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    /// "GET", "PUT", "POST", "DELETE" or "HEAD".
    const char *method;
    /// Path-style: endpoint/bucket/key?query, already percent-encoded.
    const char *url;
    /// "aws:amz:REGION:s3".
    const char *sigv4;
    /// "ACCESS_KEY_ID:SECRET_ACCESS_KEY".
    const char *userpwd;
    /// Extra "Name: value" headers (Content-Type, Range, ...).
    const char *const *headers;
    size_t header_count;
    /// The request body for PUT and POST (may be empty). It is sent from
    /// memory, so libcurl hashes it into x-amz-content-sha256 and signs it.
    const void *body;
    size_t body_len;
    /// When >= 0, a 2xx response body is written here; otherwise (and for
    /// every error response) it is kept in memory, up to 16 MiB.
    int out_fd;
    long timeout_ms;
    long connect_timeout_ms;
    /// 1 skips TLS certificate verification (never by default).
    int insecure;
} roost_s3_request;

typedef struct {
    /// The HTTP status, or 0 when no response arrived.
    long status;
    /// The response's ETag header, quotes included (empty when absent).
    char etag[128];
    /// The in-memory response body (malloc'd; release with roost_s3_release).
    char *body;
    size_t body_len;
    /// Bytes written to out_fd.
    long long written;
    /// A transport failure (empty when a response arrived).
    char error[256];
} roost_s3_response;

/// Performs the request. Returns 0 when a response arrived (any status), -1
/// on a transport failure or when libcurl cannot be loaded (see out->error).
int roost_s3_perform(const roost_s3_request *req, roost_s3_response *out);

/// Frees out->body.
void roost_s3_release(roost_s3_response *out);

#ifdef __cplusplus
}
#endif
#endif
