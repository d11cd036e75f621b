// libsoup shims, owned by the Soup binding. Same rule as CGLibShims.h:
// only what Swift cannot call, each with a one-line reason.
#ifndef ECV_SOUP_SHIMS_H
#define ECV_SOUP_SHIMS_H
#include <libsoup/soup.h>

// SOUP_HTTP_URI_FLAGS is a macro combining GUriFlags; libsoup expects URIs parsed with exactly these.
static inline GUriFlags ecv_soup_http_uri_flags(void) { return SOUP_HTTP_URI_FLAGS; }

// permessage-deflate that inflates within a bound (bounded_deflate.c): a GObject subclass, which Swift cannot define.
#define ECV_TYPE_BOUNDED_DEFLATE (ecv_bounded_deflate_get_type())
G_DECLARE_FINAL_TYPE(EcvBoundedDeflate, ecv_bounded_deflate, ECV, BOUNDED_DEFLATE, SoupWebsocketExtension)
// Replaces libsoup's deflate extension on `server` with the bounded one.
void ecv_soup_server_use_bounded_deflate(SoupServer *server);
// The bound of one connection's extension (its max incoming payload size), and the bound new ones start with.
void ecv_bounded_deflate_set_max(SoupWebsocketExtension *extension, gsize bytes);
void ecv_bounded_deflate_set_default_max(gsize bytes);

#endif
