// Umbrella header for libsoup 3 (HTTP and WebSocket, client and server).
#include <libsoup/soup.h>
