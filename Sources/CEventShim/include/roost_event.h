#ifndef ROOST_EVENT_SHIM_H
#define ROOST_EVENT_SHIM_H

#include <stddef.h>

struct bufferevent;
struct evbuffer;

/// Reads the rest of a large body in a few system calls; call from the input
/// buffer callback of a plain socket bufferevent after libevent added
/// `n_added` bytes. libevent 2.1's evbuffer_read takes at most 4 KiB a call
/// (2.2 made it settable), so a 200 KB upload would cost about 50 trips round
/// the loop. After a read that filled those 4 KiB, one recv(2) takes what
/// else the socket holds (up to 1 MiB) into the same input buffer.
void roost_read_more(struct bufferevent *bev, struct evbuffer *input, size_t n_added);

#endif
