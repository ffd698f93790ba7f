/* The ceiling: libevent's evhttp answering a fixed small JSON body, with the
 * same shape as roostd (one evhttp per event-loop thread, all accepting from
 * one shared listening socket). Anything roostd does costs time above this.
 *   gcc -O2 -o hello hello.c -levent -levent_pthreads -lpthread
 *   ./hello 127.0.0.1 PORT [THREADS]                                       */
#include <event2/event.h>
#include <event2/http.h>
#include <event2/buffer.h>
#include <event2/thread.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char BODY[] =
    "{\"_id\":\"0123456789abcdef01234567\",\"category\":\"c7\",\"n\":42,\"name\":\"hello\"}";

static void handle(struct evhttp_request *req, void *arg) {
    (void)arg;
    struct evbuffer *out = evbuffer_new();
    evbuffer_add_reference(out, BODY, sizeof BODY - 1, NULL, NULL);
    evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type", "application/json");
    evhttp_send_reply(req, 200, "OK", out);
    evbuffer_free(out);
}

static void *loop(void *arg) { event_base_dispatch((struct event_base *)arg); return NULL; }

int main(int argc, char **argv) {
    if (argc < 3) { fprintf(stderr, "usage: %s HOST PORT [THREADS]\n", argv[0]); return 2; }
    int threads = argc > 3 ? atoi(argv[3]) : 2;
    if (threads < 1 || threads > 64) threads = 2;
    evthread_use_pthreads();
    struct evhttp_bound_socket *first = NULL;
    pthread_t tid[64];
    for (int i = 0; i < threads; i++) {
        struct event_base *base = event_base_new();
        struct evhttp *http = evhttp_new(base);
        evhttp_set_gencb(http, handle, NULL);
        if (i == 0) {
            first = evhttp_bind_socket_with_handle(http, argv[1], (ev_uint16_t)atoi(argv[2]));
            if (!first) { fprintf(stderr, "hello: cannot bind %s:%s\n", argv[1], argv[2]); return 1; }
        } else if (!evhttp_accept_socket_with_handle(http, evhttp_bound_socket_get_fd(first))) {
            fprintf(stderr, "hello: cannot share the listening socket\n"); return 1;
        }
        pthread_create(&tid[i], NULL, loop, base);
    }
    for (int i = 0; i < threads; i++) pthread_join(tid[i], NULL);
    return 0;
}
