// Shims for the few GLib/GStreamer/libsoup constructs Swift cannot call directly.
// Rule: only function-like macros, variadic functions and struct fields behind macros
// belong here; everything else is called from Swift as it is. Each shim says why it exists.
#ifndef ECV_GLIB_SHIMS_H
#define ECV_GLIB_SHIMS_H

#ifndef GST_USE_UNSTABLE_API
#define GST_USE_UNSTABLE_API 1
// libsoup shims live in their own header, owned by the Soup binding.
#include "CGLibSoupShims.h"

#endif
#include <gst/gst.h>
#include <gst/webrtc/webrtc.h>
#include <libsoup/soup.h>

// G_TYPE_* fundamentals are function-like macros (G_TYPE_MAKE_FUNDAMENTAL), invisible to Swift.
static inline GType ecv_type_boolean(void) { return G_TYPE_BOOLEAN; }
static inline GType ecv_type_char(void) { return G_TYPE_CHAR; }
static inline GType ecv_type_uchar(void) { return G_TYPE_UCHAR; }
static inline GType ecv_type_int(void) { return G_TYPE_INT; }
static inline GType ecv_type_uint(void) { return G_TYPE_UINT; }
static inline GType ecv_type_long(void) { return G_TYPE_LONG; }
static inline GType ecv_type_ulong(void) { return G_TYPE_ULONG; }
static inline GType ecv_type_int64(void) { return G_TYPE_INT64; }
static inline GType ecv_type_uint64(void) { return G_TYPE_UINT64; }
static inline GType ecv_type_float(void) { return G_TYPE_FLOAT; }
static inline GType ecv_type_double(void) { return G_TYPE_DOUBLE; }
static inline GType ecv_type_string(void) { return G_TYPE_STRING; }
static inline GType ecv_type_enum(void) { return G_TYPE_ENUM; }
static inline GType ecv_type_flags(void) { return G_TYPE_FLAGS; }
static inline GType ecv_type_object(void) { return G_TYPE_OBJECT; }
static inline GType ecv_type_boxed(void) { return G_TYPE_BOXED; }
static inline GType ecv_type_pointer(void) { return G_TYPE_POINTER; }
static inline GType ecv_type_none(void) { return G_TYPE_NONE; }
static inline GType ecv_type_bytes(void) { return G_TYPE_BYTES; }
static inline GType ecv_type_strv(void) { return G_TYPE_STRV; }

// G_SIGNAL_TYPE_STATIC_SCOPE is a macro over a reserved GType bit; signal parameter types carry it.
static inline GType ecv_signal_type_static_scope(void) { return G_SIGNAL_TYPE_STATIC_SCOPE; }

// G_OBJECT_TYPE reads the instance's class pointer through a macro chain.
static inline GType ecv_object_type(gpointer object) { return G_OBJECT_TYPE(object); }

// GClosure keeps its user data in a bitfield-adjacent struct; read it in C, not by layout guessing.
static inline gpointer ecv_closure_data(GClosure *closure) { return closure->data; }

// GST_TYPE_LIST / GST_TYPE_ARRAY / GST_TYPE_FRACTION are macros over exported variables.
static inline GType ecv_type_value_list(void) { return GST_TYPE_LIST; }
static inline GType ecv_type_value_array(void) { return GST_TYPE_ARRAY; }
static inline GType ecv_type_fraction(void) { return GST_TYPE_FRACTION; }
static inline GType ecv_type_caps(void) { return GST_TYPE_CAPS; }
static inline GType ecv_type_structure(void) { return GST_TYPE_STRUCTURE; }

// GST_PAD_PROBE_INFO_BUFFER is a macro cast on the probe's data pointer, whatever it carries:
// NULL here unless the probe fired for a buffer (payloaders push buffer lists).
static inline GstBuffer *ecv_probe_info_buffer(GstPadProbeInfo *info) {
    return (GST_PAD_PROBE_INFO_TYPE(info) & GST_PAD_PROBE_TYPE_BUFFER) ? GST_PAD_PROBE_INFO_BUFFER(info) : NULL;
}
// GST_PAD_PROBE_INFO_BUFFER_LIST likewise, NULL unless the probe fired for a buffer list.
static inline GstBufferList *ecv_probe_info_buffer_list(GstPadProbeInfo *info) {
    return (GST_PAD_PROBE_INFO_TYPE(info) & GST_PAD_PROBE_TYPE_BUFFER_LIST) ? GST_PAD_PROBE_INFO_BUFFER_LIST(info) : NULL;
}
// GST_PAD_PROBE_INFO_EVENT likewise, NULL unless the probe fired for an event.
static inline GstEvent *ecv_probe_info_event(GstPadProbeInfo *info) {
    return (GST_PAD_PROBE_INFO_TYPE(info) & GST_PAD_PROBE_TYPE_EVENT_BOTH) ? GST_PAD_PROBE_INFO_EVENT(info) : NULL;
}

// GST_BUFFER_FLAG_IS_SET / SET are macros over the mini-object flags.
static inline gboolean ecv_buffer_is_delta_unit(GstBuffer *buffer) { return GST_BUFFER_FLAG_IS_SET(buffer, GST_BUFFER_FLAG_DELTA_UNIT); }

// GST_EVENT_TYPE is a macro over the event's mini-object type field.
static inline GstEventType ecv_event_type(GstEvent *event) { return GST_EVENT_TYPE(event); }

// GST_STATE_* accessors on a GstElement are macros behind the object lock fields.
static inline GstState ecv_element_current_state(GstElement *element) { return GST_STATE(element); }

// gst_debug_log is variadic; Swift hands over one pre-formatted string.
static inline void ecv_debug_log_string(GstDebugCategory *category, GstDebugLevel level, const char *file,
                                        const char *function, gint line, GObject *object, const char *text) {
    gst_debug_log(category, level, file, function, line, object, "%s", text);
}

// libsoup shims live in their own header, owned by the Soup binding.
#include "CGLibSoupShims.h"

#endif
