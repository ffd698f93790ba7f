// HTTP/2 push client (see roost_h2.h): its own nghttp2 transport
// (roost_h2_direct.c) for every origin that speaks h2 with no proxy between,
// libcurl's multi interface for the rest.
#include "roost_h2.h"
#include "roost_h2_direct.h"
#include "roost_curl.h"
#include "curl_api.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define ROOST_H2_MAX_BODY (64 * 1024)

/// Easy handles kept between batches: set up once (callbacks, protocols,
/// CA file, HTTP/2), so a transfer only sets its URL, headers and body.
#define ROOST_H2_POOL_MAX 2048

struct roost_h2_client {
    roost_h2_direct *direct;
    /// libcurl's side, made (and libcurl loaded) at its first request.
    CURLM *multi;
    char *ca_file;
    long connections;
    CURL **pool;
    size_t pooled;
};

/// One request in flight: its handle, headers and where its answer goes.
struct transfer {
    CURL *easy;
    struct curl_slist *headers;
    roost_h2_response *out;
    char errbuf[CURL_ERROR_SIZE];
    int done;
};

roost_h2_client *roost_h2_new(const char *ca_file, char *err, size_t errlen) {
    roost_h2_client *c = calloc(1, sizeof *c);
    if (!c) { snprintf(err, errlen, "out of memory"); return NULL; }
    c->direct = roost_h2_direct_new(ca_file, err, errlen);
    if (!c->direct) { free(c); return NULL; }
    if (ca_file && ca_file[0]) c->ca_file = strdup(ca_file);
    return c;
}

/// libcurl's multi handle, loading libcurl first: 0, or -1 with the reason in `err`.
static int start_multi(roost_h2_client *c, char *err, size_t errlen) {
    if (c->multi) return 0;
    if (roost_curl_start(err, errlen) != 0) return -1;
    c->multi = api.multi_init();
    if (!c->multi) { snprintf(err, errlen, "curl_multi_init failed"); return -1; }
    // Streams over one connection per host, never a second connection.
    api.multi_setopt(c->multi, CURLMOPT_PIPELINING, (long)CURLPIPE_MULTIPLEX);
    api.multi_setopt(c->multi, CURLMOPT_MAX_HOST_CONNECTIONS, 1L);
    // A window of 200 streams in flight, the rest pending: curl 7.88 polls the
    // connection once per in-flight transfer on every wake-up, so a thousand at
    // once cost more CPU per push than they save; and a window W over a round
    // trip R caps the rate at W/R, so 200 keeps about 4,000/s at APNs' 50 ms.
    api.multi_setopt(c->multi, CURLMOPT_MAX_CONCURRENT_STREAMS, 200L);
    return 0;
}

void roost_h2_free(roost_h2_client *c) {
    if (!c) return;
    for (size_t i = 0; i < c->pooled; i++) api.easy_cleanup(c->pool[i]);
    free(c->pool);
    if (c->multi) api.multi_cleanup(c->multi);
    roost_h2_direct_free(c->direct);
    free(c->ca_file);
    free(c);
}

long roost_h2_connections(const roost_h2_client *c) { return c ? c->connections + roost_h2_direct_connections(c->direct) : 0; }

static size_t keep_body(char *ptr, size_t size, size_t nmemb, void *userdata) {
    size_t len = size * nmemb;
    roost_h2_response *out = userdata;
    size_t room = out->body_len < ROOST_H2_MAX_BODY ? ROOST_H2_MAX_BODY - out->body_len : 0;
    size_t take = len < room ? len : room;
    if (take > 0) {
        char *grown = realloc(out->body, out->body_len + take + 1);
        if (!grown) return 0;
        memcpy(grown + out->body_len, ptr, take);
        out->body = grown;
        out->body_len += take;
        out->body[out->body_len] = 0;
    }
    return len;
}

static size_t header_line(char *buffer, size_t size, size_t nitems, void *userdata) {
    size_t len = size * nitems;
    long seconds = roost_curl_retry_after(buffer, len);
    if (seconds >= 0) ((roost_h2_response *)userdata)->retry_after = seconds;
    return len;
}

/// A pooled easy handle, or a new one with the options every push transfer shares.
static CURL *take_handle(roost_h2_client *c) {
    if (c->pooled > 0) return c->pool[--c->pooled];
    CURL *e = api.easy_init();
    if (!e) return NULL;
    api.easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
    api.easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    api.easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
    api.easy_setopt(e, CURLOPT_USERAGENT, "roostd-push");
    api.easy_setopt(e, CURLOPT_WRITEFUNCTION, keep_body);
    api.easy_setopt(e, CURLOPT_HEADERFUNCTION, header_line);
    api.easy_setopt(e, CURLOPT_PIPEWAIT, 1L);
    if (c->ca_file) api.easy_setopt(e, CURLOPT_CAINFO, c->ca_file);
    return e;
}

/// Returns a finished handle to the pool (or frees it when the pool is full).
static void give_back(roost_h2_client *c, CURL *e) {
    if (!c->pool) c->pool = calloc(ROOST_H2_POOL_MAX, sizeof *c->pool);
    if (c->pool && c->pooled < ROOST_H2_POOL_MAX) {
        // Drop pointers into this batch's memory before the handle rests.
        api.easy_setopt(e, CURLOPT_HTTPHEADER, (struct curl_slist *)NULL);
        api.easy_setopt(e, CURLOPT_POSTFIELDS, (char *)NULL);
        api.easy_setopt(e, CURLOPT_ERRORBUFFER, (char *)NULL);
        c->pool[c->pooled++] = e;
    } else {
        api.easy_cleanup(e);
    }
}

static void fail_all(roost_h2_response *out, size_t n, const char *why) {
    for (size_t i = 0; i < n; i++) snprintf(out[i].error, sizeof out[i].error, "%s", why);
}

static void clear(roost_h2_response *out, size_t n) {
    for (size_t i = 0; i < n; i++) {
        out[i].status = 0; out[i].retry_after = -1; out[i].body = NULL; out[i].body_len = 0;
        out[i].http_version = 0; out[i].error[0] = 0;
    }
}

/// The requests through libcurl's multi interface.
static int curl_perform(roost_h2_client *c, const roost_h2_request *req, roost_h2_response *out, size_t n, long timeout_ms) {
    clear(out, n);
    char why[256];
    if (start_multi(c, why, sizeof why) != 0) { fail_all(out, n, why); return -1; }
    struct transfer *t = calloc(n ? n : 1, sizeof *t);
    if (!t) { fail_all(out, n, "out of memory"); return -1; }
    size_t added = 0;
    for (size_t i = 0; i < n; i++) {
        CURL *e = take_handle(c);
        if (!e) { snprintf(out[i].error, sizeof out[i].error, "curl_easy_init failed"); t[i].done = 1; continue; }
        t[i].easy = e;
        t[i].out = &out[i];
        t[i].headers = roost_curl_header_list(req[i].headers, req[i].header_count, 1);
        t[i].errbuf[0] = 0;
        api.easy_setopt(e, CURLOPT_URL, req[i].url);
        api.easy_setopt(e, CURLOPT_TIMEOUT_MS, timeout_ms);
        api.easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms);
        api.easy_setopt(e, CURLOPT_HTTPHEADER, t[i].headers);
        api.easy_setopt(e, CURLOPT_WRITEDATA, &out[i]);
        api.easy_setopt(e, CURLOPT_HEADERDATA, &out[i]);
        api.easy_setopt(e, CURLOPT_ERRORBUFFER, t[i].errbuf);
        int cleartext = strncmp(req[i].url, "http://", 7) == 0;
        api.easy_setopt(e, CURLOPT_HTTP_VERSION, (long)(cleartext ? CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE : CURL_HTTP_VERSION_2TLS));
        if (strcmp(req[i].method, "POST") == 0) {
            api.easy_setopt(e, CURLOPT_POSTFIELDS, req[i].body ? req[i].body : "");
            api.easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)req[i].body_len);
        } else {
            api.easy_setopt(e, CURLOPT_HTTPGET, 1L);
        }
        api.easy_setopt(e, CURLOPT_PRIVATE, &t[i]);
        if (api.multi_add_handle(c->multi, e) != CURLM_OK) {
            snprintf(out[i].error, sizeof out[i].error, "curl_multi_add_handle failed");
            t[i].done = 1;
            give_back(c, e);
            t[i].easy = NULL;
            continue;
        }
        added++;
    }
    size_t finished = 0;
    while (finished < added) {
        int running = 0;
        if (api.multi_perform(c->multi, &running) != CURLM_OK) break;
        CURLMsg *msg;
        int left;
        while ((msg = api.multi_info_read(c->multi, &left))) {
            if (msg->msg != CURLMSG_DONE) continue;
            struct transfer *tr = NULL;
            api.easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&tr);
            if (!tr || tr->done) continue;
            tr->done = 1;
            finished++;
            CURLcode rc = msg->data.result;
            if (rc != CURLE_OK) {
                snprintf(tr->out->error, sizeof tr->out->error, "%s", roost_curl_reason(rc, tr->errbuf));
            } else {
                api.easy_getinfo(tr->easy, CURLINFO_RESPONSE_CODE, &tr->out->status);
                long version = 0;
                api.easy_getinfo(tr->easy, CURLINFO_HTTP_VERSION, &version);
                tr->out->http_version = version == CURL_HTTP_VERSION_2_0 ? 2 : version == 0 ? 0 : 1;
            }
            long connects = 0;
            api.easy_getinfo(tr->easy, CURLINFO_NUM_CONNECTS, &connects);
            c->connections += connects;
        }
        if (finished >= added) break;
        if (api.multi_poll(c->multi, NULL, 0, 100, NULL) != CURLM_OK) break;
    }
    for (size_t i = 0; i < n; i++) {
        if (t[i].easy) {
            if (!t[i].done) snprintf(out[i].error, sizeof out[i].error, "the transfer did not finish");
            api.multi_remove_handle(c->multi, t[i].easy);
            give_back(c, t[i].easy);
        }
        if (t[i].headers) api.slist_free_all(t[i].headers);
    }
    free(t);
    return 0;
}

int roost_h2_perform(roost_h2_client *c, const roost_h2_request *req, roost_h2_response *out, size_t n, long timeout_ms) {
    clear(out, n);
    if (!c) { fail_all(out, n, "no HTTP/2 client"); return -1; }
    unsigned char *handled = calloc(n ? n : 1, 1);
    if (!handled) { fail_all(out, n, "out of memory"); return -1; }
    struct timespec began, now;
    clock_gettime(CLOCK_MONOTONIC, &began);
    roost_h2_direct_perform(c->direct, req, out, handled, n, timeout_ms);
    size_t rest = 0;
    for (size_t i = 0; i < n; i++) rest += !handled[i];
    // libcurl gets what is left of the one deadline, not a second one.
    clock_gettime(CLOCK_MONOTONIC, &now);
    timeout_ms -= (now.tv_sec - began.tv_sec) * 1000 + (now.tv_nsec - began.tv_nsec) / 1000000;
    if (timeout_ms < 1) timeout_ms = 1;
    int rc = 0;
    if (rest == n) {
        rc = curl_perform(c, req, out, n, timeout_ms);
    } else if (rest > 0) {
        roost_h2_request *sub_req = calloc(rest, sizeof *sub_req);
        roost_h2_response *sub_out = calloc(rest, sizeof *sub_out);
        if (!sub_req || !sub_out) {
            for (size_t i = 0; i < n; i++) if (!handled[i]) snprintf(out[i].error, sizeof out[i].error, "out of memory");
        } else {
            size_t k = 0;
            for (size_t i = 0; i < n; i++) if (!handled[i]) sub_req[k++] = req[i];
            rc = curl_perform(c, sub_req, sub_out, rest, timeout_ms);
            k = 0;
            for (size_t i = 0; i < n; i++) if (!handled[i]) out[i] = sub_out[k++];
        }
        free(sub_req);
        free(sub_out);
    }
    free(handled);
    return rc;
}

void roost_h2_release(roost_h2_response *out, size_t n) {
    for (size_t i = 0; i < n; i++) { free(out[i].body); out[i].body = NULL; out[i].body_len = 0; }
}
