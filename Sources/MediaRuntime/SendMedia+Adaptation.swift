import GStreamer
import MediaPipeline

/// The controls bandwidth adaptation turns while a call runs. None of them renegotiates.
extension SendMedia {
    /// Caps the frame rate of every video input, or lifts the cap (nil): below a low bitrate,
    /// half the frames at twice the bits each stay readable. The inputs' format caps carry the
    /// rate (videorate alone would offer caps they refuse), so both change, and the encoder
    /// starts again at the new rate with a key frame.
    package func setMaxVideoFrameRate(_ framesPerSecond: Int?) throws(MediaRuntimeError) {
        let formats = graph.nodes(withRole: .videoFormat)
        guard !formats.isEmpty else { throw .unavailable(control: "video frame rate", reason: "the call has no video") }
        for node in formats {
            guard case .caps(let initial)? = node.properties.first(where: { $0.name == "caps" })?.value else { continue }
            let caps = framesPerSecond.map { Self.caps(initial, withFrameRate: $0) } ?? initial
            let element = try elements.element(node.id)
            do throws(GStreamerError) {
                try element.set("caps", try Caps(caps))
            } catch {
                throw .gstreamer(error)
            }
        }
    }

    /// `caps` with its `framerate` field replaced (left alone when it has none).
    static func caps(_ caps: String, withFrameRate framesPerSecond: Int) -> String {
        caps.split(separator: ",").map { field in
            field.hasPrefix("framerate=") ? "framerate=\(max(1, framesPerSecond))/1" : String(field)
        }.joined(separator: ",")
    }

    /// Tells Opus how much of its stream to expect lost (opusenc `packet-loss-percentage`): its
    /// in-band FEC spends bits on redundancy in proportion, and none on a clean path.
    package func setExpectedAudioLoss(percent: Int) throws(MediaRuntimeError) {
        guard let node = graph.nodes(withRole: .audioEncoder).first else {
            throw .unavailable(control: "audio loss percentage", reason: "the call has no audio")
        }
        let encoder = try elements.element(node.id)
        guard encoder.hasProperty("packet-loss-percentage") else { return }
        do throws(GStreamerError) {
            try encoder.set("packet-loss-percentage", Int32(min(100, max(0, percent))))
        } catch {
            throw .gstreamer(error)
        }
    }
}

extension SendMedia {
    /// Makes every RTP payloader of the call write the transport-wide sequence number under
    /// extension `id` (nil: none), so the far end acknowledges each packet in TWCC feedback and
    /// the sender learns what got through.
    package func setTransportWideCC(id: Int?) throws(MediaRuntimeError) {
        controls.withLock { $0.transportWideCCID = id }
        for output in graph.outputs {
            let payloader = try elements.element(output.node)
            do throws(GStreamerError) {
                try payloader.clearHeaderExtensions()
                if let id { try payloader.addTransportWideCCExtension(id: id) }
            } catch {
                throw .gstreamer(error)
            }
        }
    }
}
