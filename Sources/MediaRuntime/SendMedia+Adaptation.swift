import GStreamer
import MediaPipeline

/// The controls bandwidth adaptation turns while a call runs. None of them renegotiates.
extension SendMedia {
    /// Caps the frame rate of every video input (videorate `max-rate`), or lifts the cap (nil):
    /// below a low bitrate, half the frames at twice the bits each stay readable.
    public func setMaxVideoFrameRate(_ framesPerSecond: Int?) throws(MediaRuntimeError) {
        let rates = graph.nodes.filter { $0.factory == "videorate" }
        guard !rates.isEmpty else { throw .unavailable(control: "video frame rate", reason: "the call has no video") }
        for node in rates {
            let element = try elements.element(node.id)
            do throws(GStreamerError) {
                try element.set("max-rate", Int32(clamping: framesPerSecond ?? Int(Int32.max)))
            } catch {
                throw .gstreamer(error)
            }
        }
    }

    /// Tells Opus how much of its stream to expect lost (opusenc `packet-loss-percentage`): its
    /// in-band FEC spends bits on redundancy in proportion, and none on a clean path.
    public func setExpectedAudioLoss(percent: Int) throws(MediaRuntimeError) {
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
