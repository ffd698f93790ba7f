#ifndef ROOST_EVENT_SHIM_H
#define ROOST_EVENT_SHIM_H

struct evhttp;

/// Makes `http` give each new connection a socket bufferevent that reads a
/// large body in a few system calls. libevent 2.1's evbuffer_read takes at
/// most 4 KiB a call (2.2 made it settable), so a 200 KB upload would cost
/// about 50 trips round the loop. After a read that filled those 4 KiB, one
/// recv(2) takes what else the socket holds (up to 1 MiB) into the same
/// input buffer.
void roost_http_use_large_io(struct evhttp *http);

#endif
