// roostd does not link libcurl: the first delivery loads libcurl.so.4 (and
// its ~25 libraries: gnutls, krb5, ldap, ssh2, ...) with dlopen. Its headers
// give the types, constants and prototypes.
#include "roost_curl.h"
#include "curl_api.h"
#include <ctype.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct roost_curl_api api;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static int loaded = 0;
static char load_error[256] = "libcurl was not loaded";

#define ROOST_LIBCURL "libcurl.so.4"

static void load(void) {
    void *handle = dlopen(ROOST_LIBCURL, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        const char *why = dlerror();
        snprintf(load_error, sizeof load_error, ROOST_LIBCURL " could not be loaded (%s)", why ? why : "unknown error");
        return;
    }
    const struct { const char *name; void **slot; } symbols[] = {
        {"curl_global_init", (void **)&api.global_init}, {"curl_easy_init", (void **)&api.easy_init},
        {"curl_easy_setopt", (void **)&api.easy_setopt}, {"curl_easy_perform", (void **)&api.easy_perform},
        {"curl_easy_getinfo", (void **)&api.easy_getinfo}, {"curl_easy_strerror", (void **)&api.easy_strerror},
        {"curl_easy_cleanup", (void **)&api.easy_cleanup}, {"curl_easy_reset", (void **)&api.easy_reset}, {"curl_slist_append", (void **)&api.slist_append},
        {"curl_slist_free_all", (void **)&api.slist_free_all},
        {"curl_multi_init", (void **)&api.multi_init}, {"curl_multi_setopt", (void **)&api.multi_setopt},
        {"curl_multi_add_handle", (void **)&api.multi_add_handle}, {"curl_multi_remove_handle", (void **)&api.multi_remove_handle},
        {"curl_multi_perform", (void **)&api.multi_perform}, {"curl_multi_poll", (void **)&api.multi_poll},
        {"curl_multi_info_read", (void **)&api.multi_info_read}, {"curl_multi_cleanup", (void **)&api.multi_cleanup},
    };
    for (size_t i = 0; i < sizeof symbols / sizeof symbols[0]; i++) {
        *symbols[i].slot = dlsym(handle, symbols[i].name);
        if (!*symbols[i].slot) {
            snprintf(load_error, sizeof load_error, ROOST_LIBCURL " has no %s", symbols[i].name);
            return;
        }
    }
    if (api.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        snprintf(load_error, sizeof load_error, "curl_global_init failed");
        return;
    }
    __atomic_store_n(&loaded, 1, __ATOMIC_RELEASE);
}

int roost_curl_start(char *err, size_t errlen) {
    pthread_once(&load_once, load);
    if (__atomic_load_n(&loaded, __ATOMIC_ACQUIRE)) return 0;
    if (err && errlen > 0) snprintf(err, errlen, "%s", load_error);
    return -1;
}

/// The response body is read and thrown away (receivers' answers are not kept).
static size_t discard(char *ptr, size_t size, size_t nmemb, void *userdata) {
    (void)ptr; (void)userdata;
    return size * nmemb;
}

void roost_curl_setup(CURL *curl, const struct roost_curl_options *o) {
    o->errbuf[0] = 0;
    api.easy_setopt(curl, CURLOPT_URL, o->url);
    api.easy_setopt(curl, CURLOPT_PROTOCOLS_STR, o->protocols);
    api.easy_setopt(curl, CURLOPT_TIMEOUT_MS, o->timeout_ms);
    api.easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, o->connect_timeout_ms);
    api.easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    api.easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 0L);
    if (o->user_agent) api.easy_setopt(curl, CURLOPT_USERAGENT, o->user_agent);
    if (o->headers) api.easy_setopt(curl, CURLOPT_HTTPHEADER, o->headers);
    if (o->body) {
        api.easy_setopt(curl, CURLOPT_WRITEFUNCTION, o->body);
        api.easy_setopt(curl, CURLOPT_WRITEDATA, o->body_data);
    }
    if (o->header) {
        api.easy_setopt(curl, CURLOPT_HEADERFUNCTION, o->header);
        api.easy_setopt(curl, CURLOPT_HEADERDATA, o->header_data);
    }
    api.easy_setopt(curl, CURLOPT_ERRORBUFFER, o->errbuf);
}

struct curl_slist *roost_curl_header_list(const char *const *headers, size_t count, int no_expect) {
    struct curl_slist *list = NULL;
    for (size_t i = 0; i < count; i++) list = api.slist_append(list, headers[i]);
    if (no_expect) list = api.slist_append(list, "Expect:");
    return list;
}

long roost_curl_retry_after(const char *line, size_t len) {
    static const char name[] = "retry-after:";
    size_t n = sizeof(name) - 1;
    if (len <= n || strncasecmp(line, name, n) != 0) return -1;
    size_t i = n;
    while (i < len && (line[i] == ' ' || line[i] == '\t')) i++;
    long value = 0;
    int digits = 0;
    while (i < len && isdigit((unsigned char)line[i]) && digits < 9) {
        value = value * 10 + (line[i] - '0');
        i++; digits++;
    }
    return digits > 0 ? value : -1;
}

const char *roost_curl_reason(CURLcode rc, const char *errbuf) {
    return errbuf[0] ? errbuf : api.easy_strerror(rc);
}

/// Picks Retry-After out of the response headers (delta-seconds form only).
static size_t header_line(char *buffer, size_t size, size_t nitems, void *userdata) {
    size_t len = size * nitems;
    long seconds = roost_curl_retry_after(buffer, len);
    if (seconds >= 0) ((roost_curl_result *)userdata)->retry_after = seconds;
    return len;
}

/// Empties `out` before a request.
static void reset(roost_curl_result *out) {
    out->status = 0;
    out->retry_after = -1;
    out->error[0] = 0;
}

/// A new easy handle once libcurl is loaded; NULL with the reason in `out`.
static CURL *new_handle(roost_curl_result *out) {
    if (roost_curl_start(out->error, sizeof out->error) != 0) return NULL;
    CURL *curl = api.easy_init();
    if (!curl) snprintf(out->error, sizeof out->error, "curl_easy_init failed");
    return curl;
}

/// Copies why a transfer failed into `out`.
static void set_error(roost_curl_result *out, const char *why) {
    strncpy(out->error, why, sizeof(out->error) - 1);
    out->error[sizeof(out->error) - 1] = 0;
}

int roost_curl_post(const char *url, const char *const *headers, size_t header_count,
                    const void *body, size_t body_len, long timeout_ms, roost_curl_result *out) {
    reset(out);
    CURL *curl = new_handle(out);
    if (!curl) return -1;
    struct curl_slist *list = roost_curl_header_list(headers, header_count, 1);
    char errbuf[CURL_ERROR_SIZE];
    roost_curl_setup(curl, &(struct roost_curl_options){
        .url = url, .protocols = "http,https", .timeout_ms = timeout_ms, .connect_timeout_ms = timeout_ms,
        .user_agent = "roostd-webhooks", .headers = list, .body = discard, .header = header_line, .header_data = out, .errbuf = errbuf});
    api.easy_setopt(curl, CURLOPT_POST, 1L);
    api.easy_setopt(curl, CURLOPT_POSTFIELDS, body);
    api.easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body_len);
    CURLcode rc = api.easy_perform(curl);
    int result = 0;
    if (rc != CURLE_OK) {
        set_error(out, roost_curl_reason(rc, errbuf));
        result = -1;
    } else {
        api.easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &out->status);
    }
    api.slist_free_all(list);
    api.easy_cleanup(curl);
    return result;
}

/// The message being uploaded as DATA.
struct smtp_source { const char *data; size_t left; };

static size_t smtp_read(char *buffer, size_t size, size_t nitems, void *userdata) {
    struct smtp_source *src = userdata;
    size_t room = size * nitems;
    size_t n = src->left < room ? src->left : room;
    memcpy(buffer, src->data, n);
    src->data += n;
    src->left -= n;
    return n;
}

int roost_curl_smtp(const char *url, const char *from, const char *recipient, const char *message, size_t message_len,
                    const char *username, const char *password, roost_smtp_tls tls, long timeout_ms,
                    void **session, roost_curl_result *out) {
    reset(out);
    CURL *curl = session ? *session : NULL;
    if (curl) {
        api.easy_reset(curl); // keeps the open connection
    } else {
        curl = new_handle(out);
        if (!curl) return -1;
    }
    struct curl_slist *rcpt = api.slist_append(NULL, recipient);
    struct smtp_source src = { message, message_len };
    char errbuf[CURL_ERROR_SIZE];
    roost_curl_setup(curl, &(struct roost_curl_options){
        .url = url, .protocols = "smtp,smtps", .timeout_ms = timeout_ms, .connect_timeout_ms = timeout_ms, .errbuf = errbuf});
    api.easy_setopt(curl, CURLOPT_MAIL_FROM, from);
    api.easy_setopt(curl, CURLOPT_MAIL_RCPT, rcpt);
    api.easy_setopt(curl, CURLOPT_READFUNCTION, smtp_read);
    api.easy_setopt(curl, CURLOPT_READDATA, &src);
    api.easy_setopt(curl, CURLOPT_UPLOAD, 1L);
    api.easy_setopt(curl, CURLOPT_INFILESIZE_LARGE, (curl_off_t)message_len);
    long use_ssl = tls == ROOST_SMTP_TLS_REQUIRE ? (long)CURLUSESSL_ALL : tls == ROOST_SMTP_TLS_TRY ? (long)CURLUSESSL_TRY : (long)CURLUSESSL_NONE;
    api.easy_setopt(curl, CURLOPT_USE_SSL, use_ssl);
    if (username && username[0]) api.easy_setopt(curl, CURLOPT_USERNAME, username);
    if (password && password[0]) api.easy_setopt(curl, CURLOPT_PASSWORD, password);
    CURLcode rc = api.easy_perform(curl);
    api.easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &out->status);
    int result = 0;
    if (rc != CURLE_OK) {
        set_error(out, roost_curl_reason(rc, errbuf));
        result = -1;
    }
    api.slist_free_all(rcpt);
    if (session && result == 0) {
        *session = curl;
    } else {
        api.easy_cleanup(curl);
        if (session) *session = NULL;
    }
    return result;
}

void roost_curl_smtp_close(void *session) {
    if (session) api.easy_cleanup(session);
}

struct get_sink { char *data; size_t len, max; int over; char *cache_control; size_t cc_len; };

static size_t get_body(char *ptr, size_t size, size_t nmemb, void *userdata) {
    struct get_sink *sink = userdata;
    size_t n = size * nmemb;
    if (sink->len + n > sink->max) { sink->over = 1; return 0; }
    char *grown = realloc(sink->data, sink->len + n + 1);
    if (!grown) return 0;
    sink->data = grown;
    memcpy(sink->data + sink->len, ptr, n);
    sink->len += n;
    sink->data[sink->len] = 0;
    return n;
}

static size_t get_header(char *buffer, size_t size, size_t nitems, void *userdata) {
    struct get_sink *sink = userdata;
    size_t len = size * nitems;
    static const char name[] = "cache-control:";
    size_t n = sizeof(name) - 1;
    if (len > n && strncasecmp(buffer, name, n) == 0 && sink->cc_len > 0) {
        size_t i = n;
        while (i < len && (buffer[i] == ' ' || buffer[i] == '\t')) i++;
        size_t k = 0;
        while (i < len && buffer[i] != '\r' && buffer[i] != '\n' && k + 1 < sink->cc_len) sink->cache_control[k++] = buffer[i++];
        sink->cache_control[k] = 0;
    }
    return len;
}

int roost_curl_get(const char *url, long timeout_ms, size_t max_bytes, char **body, size_t *body_len,
                   char *cache_control, size_t cache_control_len, roost_curl_result *out) {
    reset(out);
    *body = NULL;
    *body_len = 0;
    if (cache_control_len > 0) cache_control[0] = 0;
    CURL *curl = new_handle(out);
    if (!curl) return -1;
    struct get_sink sink = { NULL, 0, max_bytes, 0, cache_control, cache_control_len };
    char errbuf[CURL_ERROR_SIZE];
    roost_curl_setup(curl, &(struct roost_curl_options){
        .url = url, .protocols = "http,https", .timeout_ms = timeout_ms, .connect_timeout_ms = timeout_ms, .user_agent = "roostd",
        .body = get_body, .body_data = &sink, .header = get_header, .header_data = &sink, .errbuf = errbuf});
    api.easy_setopt(curl, CURLOPT_HTTPGET, 1L);
    CURLcode rc = api.easy_perform(curl);
    int result = 0;
    if (rc != CURLE_OK || sink.over) {
        set_error(out, sink.over ? "response body too large" : roost_curl_reason(rc, errbuf));
        free(sink.data);
        result = -1;
    } else {
        api.easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &out->status);
        *body = sink.data;
        *body_len = sink.len;
    }
    api.easy_cleanup(curl);
    return result;
}

int roost_curl_post_form(const char *url, const char *body, size_t body_len, long timeout_ms, size_t max_bytes,
                         char **answer, size_t *answer_len, roost_curl_result *out) {
    reset(out);
    *answer = NULL;
    *answer_len = 0;
    CURL *curl = new_handle(out);
    if (!curl) return -1;
    const char *type = "Content-Type: application/x-www-form-urlencoded";
    struct curl_slist *list = roost_curl_header_list(&type, 1, 1);
    struct get_sink sink = { NULL, 0, max_bytes, 0, NULL, 0 };
    char errbuf[CURL_ERROR_SIZE];
    roost_curl_setup(curl, &(struct roost_curl_options){
        .url = url, .protocols = "http,https", .timeout_ms = timeout_ms, .connect_timeout_ms = timeout_ms, .user_agent = "roostd",
        .headers = list, .body = get_body, .body_data = &sink, .header = get_header, .header_data = &sink, .errbuf = errbuf});
    api.easy_setopt(curl, CURLOPT_POST, 1L);
    api.easy_setopt(curl, CURLOPT_POSTFIELDS, body);
    api.easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body_len);
    CURLcode rc = api.easy_perform(curl);
    int result = 0;
    if (rc != CURLE_OK || sink.over) {
        set_error(out, sink.over ? "response body too large" : roost_curl_reason(rc, errbuf));
        free(sink.data);
        result = -1;
    } else {
        api.easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &out->status);
        *answer = sink.data;
        *answer_len = sink.len;
    }
    api.slist_free_all(list);
    api.easy_cleanup(curl);
    return result;
}

void roost_curl_free(void *p) { free(p); }
