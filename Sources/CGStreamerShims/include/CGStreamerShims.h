// Shims for the few GStreamer constructs Swift cannot call directly (same rule as CGLibShims.h).
#ifndef ECV_GSTREAMER_SHIMS_H
#define ECV_GSTREAMER_SHIMS_H
// The WebRTC library's API is flagged unstable upstream; we accept that and pin Debian 12's 1.22.
#ifndef GST_USE_UNSTABLE_API
#define GST_USE_UNSTABLE_API 1
#endif
#include <gst/gst.h>

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

// Moves a probed buffer's (or every buffer of a probed list's) PTS and DTS `advance` nanoseconds
// earlier, never below zero; the probe's data is replaced with a writable copy first when shared.
static inline gboolean ecv_advance_timestamps(GstBuffer **buffer, guint index, gpointer advance) {
    (void)index;
    GstClockTime by = *(GstClockTime *)advance;
    *buffer = gst_buffer_make_writable(*buffer);
    if (GST_BUFFER_PTS_IS_VALID(*buffer)) GST_BUFFER_PTS(*buffer) = GST_BUFFER_PTS(*buffer) > by ? GST_BUFFER_PTS(*buffer) - by : 0;
    if (GST_BUFFER_DTS_IS_VALID(*buffer)) GST_BUFFER_DTS(*buffer) = GST_BUFFER_DTS(*buffer) > by ? GST_BUFFER_DTS(*buffer) - by : 0;
    return TRUE;
}
static inline void ecv_probe_info_advance_timestamps(GstPadProbeInfo *info, GstClockTime advance) {
    if (GST_PAD_PROBE_INFO_TYPE(info) & GST_PAD_PROBE_TYPE_BUFFER) {
        GstBuffer *buffer = GST_PAD_PROBE_INFO_BUFFER(info);
        ecv_advance_timestamps(&buffer, 0, &advance);
        GST_PAD_PROBE_INFO_DATA(info) = buffer;
    } else if (GST_PAD_PROBE_INFO_TYPE(info) & GST_PAD_PROBE_TYPE_BUFFER_LIST) {
        GstBufferList *list = gst_buffer_list_make_writable(GST_PAD_PROBE_INFO_BUFFER_LIST(info));
        gst_buffer_list_foreach(list, ecv_advance_timestamps, &advance);
        GST_PAD_PROBE_INFO_DATA(info) = list;
    }
}

// Overwrites `size` bytes at `offset` of a probed buffer (not a list) with `bytes`; the probe's
// data is replaced with a writable copy first when shared. FALSE when the probe carries no buffer
// or the buffer is shorter than offset + size (nothing is written then).
static inline gboolean ecv_probe_info_patch_buffer(GstPadProbeInfo *info, gsize offset, const guint8 *bytes, gsize size) {
    if (!(GST_PAD_PROBE_INFO_TYPE(info) & GST_PAD_PROBE_TYPE_BUFFER)) return FALSE;
    GstBuffer *buffer = GST_PAD_PROBE_INFO_BUFFER(info);
    if (gst_buffer_get_size(buffer) < offset + size) return FALSE;
    buffer = gst_buffer_make_writable(buffer);
    GST_PAD_PROBE_INFO_DATA(info) = buffer;
    return gst_buffer_fill(buffer, offset, bytes, size) == size;
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

// rtpsession's transport-wide feedback, as the upstream custom event `RTPTWCCPackets` it pushes
// for every feedback message: a "packets" GValueArray (GLib's deprecated array type, awkward from
// Swift) of `RTPTWCCPacket` structures. Copies up to `capacity` packets' send time ("local-ts")
// and arrival time ("remote-ts", GST_CLOCK_TIME_NONE when lost), both nanoseconds, and size in
// bytes; returns how many were copied (0 when the structure is not that event's).
static inline const GValueArray *ecv_twcc_packets(const GstStructure *structure) {
    if (!gst_structure_has_name(structure, "RTPTWCCPackets")) return NULL;
    const GValue *value = gst_structure_get_value(structure, "packets");
    G_GNUC_BEGIN_IGNORE_DEPRECATIONS
    GType array_type = g_value_array_get_type();
    G_GNUC_END_IGNORE_DEPRECATIONS
    if (value == NULL || !G_VALUE_HOLDS(value, array_type)) return NULL;
    return (const GValueArray *) g_value_get_boxed(value);
}

// How many packet entries the event's message has (0 when the structure is not that event's):
// the reader sizes its buffers by it instead of by the most it reads.
static inline guint ecv_twcc_packets_count(const GstStructure *structure) {
    const GValueArray *packets = ecv_twcc_packets(structure);
    return packets == NULL ? 0 : packets->n_values;
}

static inline guint ecv_twcc_packets_read(const GstStructure *structure, guint64 *sent, guint64 *arrived,
                                          guint *sizes, guint capacity) {
    const GValueArray *packets = ecv_twcc_packets(structure);
    if (packets == NULL) return 0;
    guint count = 0;
    for (guint i = 0; i < packets->n_values && count < capacity; i++) {
        const GValue *entry = &packets->values[i];
        if (!GST_VALUE_HOLDS_STRUCTURE(entry)) continue;
        const GstStructure *packet = gst_value_get_structure(entry);
        guint64 local = GST_CLOCK_TIME_NONE, remote = GST_CLOCK_TIME_NONE;
        guint size = 0;
        if (!gst_structure_get_uint64(packet, "local-ts", &local) || !GST_CLOCK_TIME_IS_VALID(local)) continue;
        gst_structure_get_uint64(packet, "remote-ts", &remote);
        gst_structure_get_uint(packet, "size", &size);
        sent[count] = local;
        arrived[count] = remote;
        sizes[count] = size;
        count++;
    }
    return count;
}

#endif
