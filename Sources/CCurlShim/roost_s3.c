// S3 requests over libcurl, signed by CURLOPT_AWS_SIGV4. Bodies go out from
// memory (POSTFIELDS, with CUSTOMREQUEST for PUT), which is what makes
// libcurl hash the payload into x-amz-content-sha256 and sign it rather than
// send UNSIGNED-PAYLOAD.
#include "roost_s3.h"
#include "roost_curl.h"
#include "curl_api.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

/// Error bodies and listings are small; anything larger is cut off.
#define ROOST_S3_MEMORY_CAP (16 << 20)

typedef struct {
    CURL *curl;
    const roost_s3_request *req;
    roost_s3_response *out;
    size_t capacity;
} transfer;

static int to_descriptor(transfer *t) {
    long status = 0;
    api.easy_getinfo(t->curl, CURLINFO_RESPONSE_CODE, &status);
    return t->req->out_fd >= 0 && status >= 200 && status < 300;
}

static size_t receive(char *ptr, size_t size, size_t nmemb, void *userdata) {
    transfer *t = userdata;
    size_t len = size * nmemb;
    if (to_descriptor(t)) {
        size_t done = 0;
        while (done < len) {
            ssize_t n = write(t->req->out_fd, ptr + done, len - done);
            if (n < 0) { if (errno == EINTR) continue; return 0; }
            done += (size_t)n;
        }
        t->out->written += (long long)len;
        return len;
    }
    roost_s3_response *out = t->out;
    if (out->body_len + len > ROOST_S3_MEMORY_CAP) return 0;
    if (out->body_len + len + 1 > t->capacity) {
        size_t want = t->capacity ? t->capacity : 4096;
        while (want < out->body_len + len + 1) want *= 2;
        char *grown = realloc(out->body, want);
        if (!grown) return 0;
        out->body = grown;
        t->capacity = want;
    }
    memcpy(out->body + out->body_len, ptr, len);
    out->body_len += len;
    out->body[out->body_len] = 0;
    return len;
}

/// Keeps the ETag header (quotes included).
static size_t header_line(char *buffer, size_t size, size_t nitems, void *userdata) {
    size_t len = size * nitems;
    roost_s3_response *out = ((transfer *)userdata)->out;
    static const char name[] = "etag:";
    size_t n = sizeof(name) - 1;
    if (len > n && strncasecmp(buffer, name, n) == 0) {
        size_t i = n, end = len;
        while (i < end && (buffer[i] == ' ' || buffer[i] == '\t')) i++;
        while (end > i && (buffer[end - 1] == '\r' || buffer[end - 1] == '\n' || buffer[end - 1] == ' ')) end--;
        size_t keep = end - i < sizeof(out->etag) - 1 ? end - i : sizeof(out->etag) - 1;
        memcpy(out->etag, buffer + i, keep);
        out->etag[keep] = 0;
    }
    return len;
}

/// Each worker thread keeps one easy handle, reset between requests, so its
/// connection (and TLS session) to the endpoint is reused. Worker threads
/// live as long as the process; the handle goes with it.
static __thread CURL *kept;

int roost_s3_perform(const roost_s3_request *req, roost_s3_response *out) {
    memset(out, 0, sizeof *out);
    if (roost_curl_start(out->error, sizeof out->error) != 0) return -1;
    CURL *curl = kept;
    if (curl) api.easy_reset(curl); else curl = api.easy_init();
    kept = NULL;
    if (!curl) {
        snprintf(out->error, sizeof out->error, "curl_easy_init failed");
        return -1;
    }
    transfer t = {curl, req, out, 0};
    // No "Expect:" override: libcurl 7.88 would sign the emptied header and
    // S3 would refuse the signature. 100-continue also spares sending a
    // large body that S3 is about to refuse.
    struct curl_slist *list = roost_curl_header_list(req->headers, req->header_count, 0);
    char errbuf[CURL_ERROR_SIZE];
    roost_curl_setup(curl, &(struct roost_curl_options){
        .url = req->url, .protocols = "http,https", .timeout_ms = req->timeout_ms, .connect_timeout_ms = req->connect_timeout_ms,
        .user_agent = "roostd-s3", .headers = list, .body = receive, .body_data = &t, .header = header_line, .header_data = &t,
        .errbuf = errbuf});
    const char *method = req->method;
    if (strcmp(method, "HEAD") == 0) {
        api.easy_setopt(curl, CURLOPT_NOBODY, 1L);
    } else if (strcmp(method, "PUT") == 0 || strcmp(method, "POST") == 0) {
        api.easy_setopt(curl, CURLOPT_POSTFIELDS, req->body ? req->body : "");
        api.easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)req->body_len);
        if (strcmp(method, "PUT") == 0) api.easy_setopt(curl, CURLOPT_CUSTOMREQUEST, "PUT");
    } else if (strcmp(method, "GET") != 0) {
        api.easy_setopt(curl, CURLOPT_CUSTOMREQUEST, method);
    }
    api.easy_setopt(curl, CURLOPT_AWS_SIGV4, req->sigv4);
    api.easy_setopt(curl, CURLOPT_USERPWD, req->userpwd);
    api.easy_setopt(curl, CURLOPT_SSL_VERIFYPEER, req->insecure ? 0L : 1L);
    api.easy_setopt(curl, CURLOPT_SSL_VERIFYHOST, req->insecure ? 0L : 2L);
    CURLcode rc = api.easy_perform(curl);
    int result = 0;
    if (rc != CURLE_OK) {
        snprintf(out->error, sizeof out->error, "%s", roost_curl_reason(rc, errbuf));
        out->status = 0;
        result = -1;
    } else {
        api.easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &out->status);
    }
    api.slist_free_all(list);
    // After a transport failure the next request starts afresh.
    if (result == 0) kept = curl; else api.easy_cleanup(curl);
    return result;
}

void roost_s3_release(roost_s3_response *out) {
    free(out->body);
    out->body = NULL;
    out->body_len = 0;
}
