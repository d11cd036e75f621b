internal import CGStreamer

/// An SDP offer or answer as text, the form signaling carries.
package struct SessionDescription: Sendable, Equatable {
    package enum Kind: String, Sendable {
        case offer, answer, pranswer, rollback

        var native: GstWebRTCSDPType {
            switch self {
            case .offer: GST_WEBRTC_SDP_TYPE_OFFER
            case .answer: GST_WEBRTC_SDP_TYPE_ANSWER
            case .pranswer: GST_WEBRTC_SDP_TYPE_PRANSWER
            case .rollback: GST_WEBRTC_SDP_TYPE_ROLLBACK
            }
        }

        init?(_ type: GstWebRTCSDPType) {
            switch type {
            case GST_WEBRTC_SDP_TYPE_OFFER: self = .offer
            case GST_WEBRTC_SDP_TYPE_ANSWER: self = .answer
            case GST_WEBRTC_SDP_TYPE_PRANSWER: self = .pranswer
            case GST_WEBRTC_SDP_TYPE_ROLLBACK: self = .rollback
            default: return nil
            }
        }
    }

    package var kind: Kind
    package var sdp: String

    package init(kind: Kind, sdp: String) {
        self.kind = kind
        self.sdp = sdp
    }

    /// Reads a borrowed GstWebRTCSessionDescription.
    init?(reading description: UnsafePointer<GstWebRTCSessionDescription>) {
        guard let kind = Kind(description.pointee.type), let message = description.pointee.sdp,
              let text = gst_sdp_message_as_text(message) else { return nil }
        defer { g_free(text) }
        self.init(kind: kind, sdp: String(cString: text))
    }

    /// Parses the SDP and builds a GstWebRTCSessionDescription the caller must free.
    /// Malformed SDP throws naming the first offending line GStreamer could not take.
    func makeNative() throws(GStreamerError) -> UnsafeMutablePointer<GstWebRTCSessionDescription> {
        GStreamerRuntime.require()
        let lines = sdp.split(omittingEmptySubsequences: true, whereSeparator: \.isNewline)
        guard lines.first?.hasPrefix("v=") == true else {
            throw .notSupported("invalid SDP \(kind.rawValue): it must start with a 'v=' line")
        }
        if let bad = lines.first(where: { $0.count < 2 || $0[$0.index(after: $0.startIndex)] != "=" }) {
            throw .notSupported("invalid SDP \(kind.rawValue): malformed line '\(bad.prefix(60))'")
        }
        var message: UnsafeMutablePointer<GstSDPMessage>?
        guard gst_sdp_message_new_from_text(sdp, &message) == GST_SDP_OK, let message else {
            throw .notSupported("invalid SDP \(kind.rawValue): GStreamer could not parse it")
        }
        guard gst_sdp_message_medias_len(message) > 0 || kind == .rollback else {
            gst_sdp_message_free(message)
            throw .notSupported("invalid SDP \(kind.rawValue): it has no media sections")
        }
        return gst_webrtc_session_description_new(kind.native, message) // takes the message
    }
}
