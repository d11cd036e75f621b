// Shims for the few GLib/GObject constructs Swift cannot call directly (GStreamer's and
// libsoup's are in CGStreamerShims and CSoupShims).
// Rule: only function-like macros, variadic functions and struct fields behind macros
// belong here; everything else is called from Swift as it is. Each shim says why it exists.
#ifndef ECV_GLIB_SHIMS_H
#define ECV_GLIB_SHIMS_H
#include <glib-object.h>

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

#endif
