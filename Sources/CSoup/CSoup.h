// Umbrella header for libsoup 3 (HTTP and WebSocket, client and server).
#include <libsoup/soup.h>
// The HTTP server's front door (FrontDoor.swift) waits for request headers with edge-triggered
// epoll, which GLib does not wrap.
#include <sys/epoll.h>
