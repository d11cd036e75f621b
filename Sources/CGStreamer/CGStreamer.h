// Umbrella header for the GStreamer libraries ECVKit binds.
// The WebRTC library's API is flagged unstable upstream; we accept that and pin Debian 12's 1.22.
#ifndef GST_USE_UNSTABLE_API
#define GST_USE_UNSTABLE_API 1
#endif
#include <gst/gst.h>
#include <gst/base/base.h>
#include <gst/app/app.h>
#include <gst/video/video.h>
#include <gst/audio/audio.h>
#include <gst/sdp/sdp.h>
#include <gst/rtp/rtp.h>
#include <gst/webrtc/webrtc.h>
