#include "roost_curl.h"
#include <curl/curl.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int roost_curl_start(void) {
    return curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK ? 0 : -1;
}

/// The response body is read and thrown away (receivers' answers are not kept).
static size_t discard(char *ptr, size_t size, size_t nmemb, void *userdata) {
    (void)ptr; (void)userdata;
    return size * nmemb;
}

/// Picks Retry-After out of the response headers (delta-seconds form only).
static size_t header_line(char *buffer, size_t size, size_t nitems, void *userdata) {
    size_t len = size * nitems;
    roost_curl_result *out = userdata;
    static const char name[] = "retry-after:";
    size_t n = sizeof(name) - 1;
    if (len > n && strncasecmp(buffer, name, n) == 0) {
        size_t i = n;
        while (i < len && (buffer[i] == ' ' || buffer[i] == '\t')) i++;
        long value = 0;
        int digits = 0;
        while (i < len && isdigit((unsigned char)buffer[i]) && digits < 9) {
            value = value * 10 + (buffer[i] - '0');
            i++; digits++;
        }
        if (digits > 0) out->retry_after = value;
    }
    return len;
}

int roost_curl_post(const char *url, const char *const *headers, size_t header_count,
                    const void *body, size_t body_len, long timeout_ms, roost_curl_result *out) {
    out->status = 0;
    out->retry_after = -1;
    out->error[0] = 0;
    CURL *curl = curl_easy_init();
    if (!curl) {
        strncpy(out->error, "curl_easy_init failed", sizeof(out->error) - 1);
        return -1;
    }
    struct curl_slist *list = NULL;
    for (size_t i = 0; i < header_count; i++) list = curl_slist_append(list, headers[i]);
    list = curl_slist_append(list, "Expect:");
    char errbuf[CURL_ERROR_SIZE];
    errbuf[0] = 0;
    curl_easy_setopt(curl, CURLOPT_URL, url);
    curl_easy_setopt(curl, CURLOPT_POST, 1L);
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body_len);
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, list);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, timeout_ms);
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms);
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(curl, CURLOPT_USERAGENT, "roostd-webhooks");
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, discard);
    curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, header_line);
    curl_easy_setopt(curl, CURLOPT_HEADERDATA, out);
    curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, errbuf);
    CURLcode rc = curl_easy_perform(curl);
    int result = 0;
    if (rc != CURLE_OK) {
        const char *why = errbuf[0] ? errbuf : curl_easy_strerror(rc);
        strncpy(out->error, why, sizeof(out->error) - 1);
        out->error[sizeof(out->error) - 1] = 0;
        result = -1;
    } else {
        curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &out->status);
    }
    curl_slist_free_all(list);
    curl_easy_cleanup(curl);
    return result;
}
