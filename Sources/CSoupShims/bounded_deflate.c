// permessage-deflate (RFC 7692) for the server's WebSocket connections, inflating within a bound.
// libsoup 3.2's own SoupWebsocketExtensionDeflate checks max-incoming-payload-size on the
// compressed frame and inflates the whole of it: 60 MB of one letter arrived in 58 KB. This one
// stops inflating a message as soon as it passes its bound and fails the frame with 1009, so no
// more than the bound (plus one 16 KiB step) is ever allocated.
//
// It negotiates no context takeover in both directions (RFC 7692 §7.1.1: a server may ask for
// both unasked), so every message inflates from a fresh window, and it sends uncompressed
// (RSV1 clear; §6: compression is per message and optional for the sender).
#include "CSoupShims.h"
#include <string.h>
#include <zlib.h>

struct _EcvBoundedDeflate {
    SoupWebsocketExtension parent;
    z_stream inflater;
    gboolean inflater_ready;
    // Inside a compressed message (its first frame had RSV1): continuation frames inflate too.
    gboolean in_compressed_message;
    gsize message_bytes;
    gsize max_message_bytes;
};

G_DEFINE_FINAL_TYPE(EcvBoundedDeflate, ecv_bounded_deflate, SOUP_TYPE_WEBSOCKET_EXTENSION)

static gsize default_max_message_bytes = 4u << 20;

void ecv_bounded_deflate_set_default_max(gsize bytes) { default_max_message_bytes = bytes; }

void ecv_bounded_deflate_set_max(SoupWebsocketExtension *extension, gsize bytes) {
    if (ECV_IS_BOUNDED_DEFLATE(extension)) ECV_BOUNDED_DEFLATE(extension)->max_message_bytes = bytes;
}

static void ecv_bounded_deflate_init(EcvBoundedDeflate *self) {
    self->max_message_bytes = default_max_message_bytes;
}

static void ecv_bounded_deflate_finalize(GObject *object) {
    EcvBoundedDeflate *self = ECV_BOUNDED_DEFLATE(object);
    if (self->inflater_ready) inflateEnd(&self->inflater);
    G_OBJECT_CLASS(ecv_bounded_deflate_parent_class)->finalize(object);
}

// Accepts the offer's parameters as RFC 7692 defines them; anything else declines the extension.
static gboolean ecv_bounded_deflate_configure(SoupWebsocketExtension *extension, SoupWebsocketConnectionType type,
                                              GHashTable *params, GError **error) {
    EcvBoundedDeflate *self = ECV_BOUNDED_DEFLATE(extension);
    if (params) {
        GHashTableIter iter;
        gpointer key, value;
        g_hash_table_iter_init(&iter, params);
        while (g_hash_table_iter_next(&iter, &key, &value)) {
            const char *name = key;
            if (strcmp(name, "server_no_context_takeover") == 0 || strcmp(name, "client_no_context_takeover") == 0) continue;
            if (strcmp(name, "server_max_window_bits") == 0 || strcmp(name, "client_max_window_bits") == 0) continue;
            g_set_error(error, SOUP_WEBSOCKET_ERROR, SOUP_WEBSOCKET_ERROR_BAD_HANDSHAKE, "unknown permessage-deflate parameter %s", name);
            return FALSE;
        }
    }
    // Raw deflate, the largest window: a peer's smaller window inflates with it.
    memset(&self->inflater, 0, sizeof self->inflater);
    if (inflateInit2(&self->inflater, -15) != Z_OK) {
        g_set_error(error, SOUP_WEBSOCKET_ERROR, SOUP_WEBSOCKET_ERROR_BAD_HANDSHAKE, "inflate does not start");
        return FALSE;
    }
    self->inflater_ready = TRUE;
    return TRUE;
}

static char *ecv_bounded_deflate_get_response_params(SoupWebsocketExtension *extension) {
    // libsoup writes the extension name, then this as it is.
    return g_strdup("; server_no_context_takeover; client_no_context_takeover");
}

static GBytes *ecv_bounded_deflate_process_outgoing(SoupWebsocketExtension *extension, guint8 *header, GBytes *payload, GError **error) {
    return payload;
}

static GBytes *too_big(EcvBoundedDeflate *self, GBytes *payload, GByteArray *out, GError **error) {
    g_byte_array_unref(out);
    g_bytes_unref(payload);
    self->in_compressed_message = FALSE;
    g_set_error(error, SOUP_WEBSOCKET_ERROR, SOUP_WEBSOCKET_CLOSE_TOO_BIG, "a compressed message inflates past %" G_GSIZE_FORMAT " bytes",
                self->max_message_bytes);
    return NULL;
}

static GBytes *ecv_bounded_deflate_process_incoming(SoupWebsocketExtension *extension, guint8 *header, GBytes *payload, GError **error) {
    EcvBoundedDeflate *self = ECV_BOUNDED_DEFLATE(extension);
    guint8 opcode = header[0] & 0x0f;
    gboolean fin = (header[0] & 0x80) != 0, rsv1 = (header[0] & 0x40) != 0;
    if (opcode & 0x08) return payload; // control frames are never compressed
    if (opcode != 0) {
        // The first frame of a message: RSV1 says whether the message is compressed.
        self->in_compressed_message = rsv1;
        self->message_bytes = 0;
        if (rsv1) inflateReset(&self->inflater);
    } else if (rsv1) {
        g_bytes_unref(payload);
        g_set_error(error, SOUP_WEBSOCKET_ERROR, SOUP_WEBSOCKET_CLOSE_PROTOCOL_ERROR, "RSV1 on a continuation frame");
        return NULL;
    }
    if (!self->in_compressed_message) return payload;
    header[0] &= ~0x40;

    static const guint8 tail[4] = {0x00, 0x00, 0xff, 0xff};
    gsize size = 0;
    const guint8 *data = g_bytes_get_data(payload, &size);
    GByteArray *out = g_byte_array_new();
    guint8 chunk[16384];
    for (int part = 0; part < (fin ? 2 : 1); part++) {
        self->inflater.next_in = (Bytef *)(part == 0 ? data : tail);
        self->inflater.avail_in = (uInt)(part == 0 ? size : sizeof tail);
        int result;
        do {
            self->inflater.next_out = chunk;
            self->inflater.avail_out = sizeof chunk;
            result = inflate(&self->inflater, Z_SYNC_FLUSH);
            if (result == Z_NEED_DICT || result == Z_DATA_ERROR || result == Z_MEM_ERROR || result == Z_STREAM_ERROR) {
                g_byte_array_unref(out);
                g_bytes_unref(payload);
                self->in_compressed_message = FALSE;
                g_set_error(error, SOUP_WEBSOCKET_ERROR, SOUP_WEBSOCKET_CLOSE_BAD_DATA, "a compressed message does not inflate");
                return NULL;
            }
            gsize produced = sizeof chunk - self->inflater.avail_out;
            self->message_bytes += produced;
            if (self->message_bytes > self->max_message_bytes) return too_big(self, payload, out, error);
            g_byte_array_append(out, chunk, (guint)produced);
            // Z_BUF_ERROR: no progress possible (all input taken); Z_STREAM_END: the sender ended its stream.
        } while (result == Z_OK && (self->inflater.avail_in > 0 || self->inflater.avail_out == 0));
    }
    if (fin) self->in_compressed_message = FALSE;
    g_bytes_unref(payload);
    return g_byte_array_free_to_bytes(out);
}

static void ecv_bounded_deflate_class_init(EcvBoundedDeflateClass *klass) {
    SoupWebsocketExtensionClass *extension = SOUP_WEBSOCKET_EXTENSION_CLASS(klass);
    G_OBJECT_CLASS(klass)->finalize = ecv_bounded_deflate_finalize;
    extension->name = "permessage-deflate";
    extension->configure = ecv_bounded_deflate_configure;
    extension->get_response_params = ecv_bounded_deflate_get_response_params;
    extension->process_outgoing_message = ecv_bounded_deflate_process_outgoing;
    extension->process_incoming_message = ecv_bounded_deflate_process_incoming;
}

void ecv_soup_server_use_bounded_deflate(SoupServer *server) {
    soup_server_remove_websocket_extension(server, SOUP_TYPE_WEBSOCKET_EXTENSION_DEFLATE);
    soup_server_add_websocket_extension(server, ECV_TYPE_BOUNDED_DEFLATE);
}
