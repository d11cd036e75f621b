// GLib alone: the main loop, its sources and timers (GLibCore), for layers that need no GStreamer.
#include <glib.h>
#include <glib-object.h>
// Descriptor watches on the main loop (MainLoop.watchInput).
#include <glib-unix.h>
// glibc's allocator controls (malloc_trim, mallopt): media threads come and go with every call,
// and what they freed stays in their malloc arenas unless it is handed back (ProcessMemory).
#include <malloc.h>
