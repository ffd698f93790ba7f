#include "roost_tls.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/socket.h>

#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>
#include <event2/http.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

struct roost_tls {
    pthread_mutex_t lock;
    SSL_CTX *current;
};

/* Mozilla's "intermediate" TLS 1.2 suites: ECDHE only (forward secrecy), AEAD only. */
static const char *const TLS12_CIPHERS =
    "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:"
    "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:"
    "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305";

static const unsigned char ALPN_HTTP11[] = {8, 'h', 't', 't', 'p', '/', '1', '.', '1'};

/* Picks http/1.1 when the client offers it; otherwise goes on without ALPN. */
static int select_alpn(SSL *ssl, const unsigned char **out, unsigned char *out_length,
                       const unsigned char *offered, unsigned int offered_length, void *arg) {
    (void)ssl;
    (void)arg;
    unsigned char *chosen = NULL;
    if (SSL_select_next_proto(&chosen, out_length, ALPN_HTTP11, sizeof ALPN_HTTP11, offered, offered_length)
        != OPENSSL_NPN_NEGOTIATED) {
        return SSL_TLSEXT_ERR_NOACK;
    }
    *out = chosen;
    return SSL_TLSEXT_ERR_OK;
}

/* The first OpenSSL error queued (the cause; later ones are consequences),
   with what was being done. */
static void describe_error(const char *doing, const char *path, char *error, size_t length) {
    unsigned long code = ERR_get_error();
    ERR_clear_error();
    char reason[256] = "unknown error";
    if (code != 0) ERR_error_string_n(code, reason, sizeof reason);
    snprintf(error, length, "%s %s: %s", doing, path ? path : "", reason);
}

static SSL_CTX *load(const char *certificate, const char *key, char *error, size_t length) {
    ERR_clear_error();
    SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
    if (ctx == NULL) {
        describe_error("creating a TLS context", NULL, error, length);
        return NULL;
    }
    SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
    SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION | SSL_OP_CIPHER_SERVER_PREFERENCE);
    SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS);
    if (SSL_CTX_set_cipher_list(ctx, TLS12_CIPHERS) != 1) {
        describe_error("setting the TLS 1.2 ciphers", NULL, error, length);
    } else if (SSL_CTX_use_certificate_chain_file(ctx, certificate) != 1) {
        describe_error("loading the certificate chain", certificate, error, length);
    } else if (SSL_CTX_use_PrivateKey_file(ctx, key, SSL_FILETYPE_PEM) != 1) {
        describe_error("loading the private key", key, error, length);
    } else if (SSL_CTX_check_private_key(ctx) != 1) {
        describe_error("the private key does not match the certificate", key, error, length);
    } else {
        SSL_CTX_set_alpn_select_cb(ctx, select_alpn, NULL);
        return ctx;
    }
    SSL_CTX_free(ctx);
    return NULL;
}

roost_tls *roost_tls_new(const char *certificate, const char *key, char *error, size_t length) {
    SSL_CTX *ctx = load(certificate, key, error, length);
    if (ctx == NULL) return NULL;
    roost_tls *tls = calloc(1, sizeof *tls);
    if (tls == NULL) {
        SSL_CTX_free(ctx);
        snprintf(error, length, "out of memory");
        return NULL;
    }
    pthread_mutex_init(&tls->lock, NULL);
    tls->current = ctx;
    return tls;
}

int roost_tls_reload(roost_tls *tls, const char *certificate, const char *key, char *error, size_t length) {
    SSL_CTX *fresh = load(certificate, key, error, length);
    if (fresh == NULL) return -1;
    pthread_mutex_lock(&tls->lock);
    SSL_CTX *old = tls->current;
    tls->current = fresh;
    pthread_mutex_unlock(&tls->lock);
    /* Connections made with the old context hold their own reference to it. */
    SSL_CTX_free(old);
    return 0;
}

void roost_tls_describe(roost_tls *tls, char *out, size_t length) {
    pthread_mutex_lock(&tls->lock);
    SSL_CTX *ctx = tls->current;
    SSL_CTX_up_ref(ctx);
    pthread_mutex_unlock(&tls->lock);
    X509 *cert = SSL_CTX_get0_certificate(ctx);
    char subject[256] = "?", expires[64] = "?";
    if (cert != NULL) {
        X509_NAME_oneline(X509_get_subject_name(cert), subject, sizeof subject);
        BIO *bio = BIO_new(BIO_s_mem());
        if (bio != NULL) {
            if (ASN1_TIME_print(bio, X509_get0_notAfter(cert)) == 1) {
                int n = BIO_read(bio, expires, (int)sizeof expires - 1);
                expires[n > 0 ? n : 0] = '\0';
            }
            BIO_free(bio);
        }
    }
    snprintf(out, length, "%s; expires %s", subject, expires);
    SSL_CTX_free(ctx);
}

struct bufferevent *roost_tls_bufferevent_new(struct event_base *base, roost_tls *tls) {
    pthread_mutex_lock(&tls->lock);
    SSL *ssl = SSL_new(tls->current);
    pthread_mutex_unlock(&tls->lock);
    /* evhttp would fall back to a plain connection on NULL, which on a TLS
       port must never happen; both failures mean memory is exhausted. */
    if (ssl == NULL) abort();
    struct bufferevent *bev = bufferevent_openssl_socket_new(base, -1, ssl, BUFFEREVENT_SSL_ACCEPTING, BEV_OPT_CLOSE_ON_FREE);
    if (bev == NULL) abort();
    /* A client that closes without close_notify ends the connection like EOF. */
    bufferevent_openssl_set_allow_dirty_shutdown(bev, 1);
    return bev;
}
