#ifndef ROOST_CEVENT_SHIM_H
#define ROOST_CEVENT_SHIM_H
// System headers first: event2/event-config.h defines _GNU_SOURCE, which would
// otherwise change glibc struct layouts inside this clang module (see NOTES).
#include <sys/types.h>
#include <sys/time.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/file.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <netdb.h>
#include <signal.h>
#include <unistd.h>
#include <event2/event.h>
#include <event2/thread.h>
#include <event2/buffer.h>
#include <event2/http.h>
#include <event2/bufferevent.h>
#include <event2/keyvalq_struct.h>
#include <event2/listener.h>
#include <event2/util.h>
#endif
