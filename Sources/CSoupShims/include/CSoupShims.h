// libsoup shims, owned by the Soup binding. Same rule as CGLibShims.h:
// only what Swift cannot call, each with a one-line reason.
#ifndef ECV_SOUP_SHIMS_H
#define ECV_SOUP_SHIMS_H
#include <libsoup/soup.h>

// SOUP_HTTP_URI_FLAGS is a macro combining GUriFlags; libsoup expects URIs parsed with exactly these.
static inline GUriFlags ecv_soup_http_uri_flags(void) { return SOUP_HTTP_URI_FLAGS; }

#endif
