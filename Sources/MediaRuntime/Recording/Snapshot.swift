import Foundation
import GLibCore
import GStreamer
import MediaPipeline

extension CallRecorder {
    /// Writes the current picture of a recorded video track as a PNG. The recorder keeps the
    /// track's frames since its last key frame, encoded; a snapshot decodes just those in a
    /// short-lived pipeline, so nothing is decoded while no one asks and no key frame is awaited.
    package func snapshot(to url: URL, of role: TrackRole = .remoteVideo, timeout: Duration = .seconds(10)) async throws(RecordingError) {
        let track = try state.withLock { state throws(RecordingError) -> RecorderTrack? in
            try Self.requireRecording(state.phase)
            return state.recorderTracks[role]
        }
        guard let track, let gop = track.gop else {
            throw .noVideo(role: role, reason: "the recording has no such video track")
        }
        let frames = gop.snapshot
        guard !frames.isEmpty, let caps = track.muxerPad.currentCaps else {
            throw .noVideo(role: role, reason: "no key frame has arrived yet")
        }
        let png = try await PictureEncoder.png(decoding: frames.map { ($0.data, $0.pts) }, caps: caps, timeout: timeout)
        do {
            try Data(png).write(to: url, options: .atomic)
        } catch {
            throw .cannotWrite(path: url.path, reason: error.localizedDescription)
        }
    }
}

/// Decodes a group of pictures and encodes its last picture as PNG (`pngenc`), at its own size
/// or scaled into `size` (aspect kept, with borders). Package-wide: recording review (ECVRecording)
/// draws its contact sheet and rasterises its pictures with it.
package enum PictureEncoder {
    /// `frames`: encoded frames (data, nanoseconds), from a key frame on.
    package static func png(decoding frames: [([UInt8], UInt64?)], caps: Caps, scaledTo size: (width: Int, height: Int)? = nil,
                            timeout: Duration) async throws(RecordingError) -> [UInt8] {
        let picture = try await lastPicture(frames, caps: caps, scaledTo: size, timeout: timeout)
        let rawCaps: Caps
        do throws(GStreamerError) {
            rawCaps = try Caps("video/x-raw,format=RGB,width=\(picture.width),height=\(picture.height),framerate=0/1")
        } catch {
            throw .gstreamer(error)
        }
        let encoded = try await run("appsrc name=input ! pngenc ! appsink name=output", input: rawCaps,
                                    frames: [(picture.data, picture.pts)], timeout: timeout)
        guard let png = encoded.last?.bytes, !png.isEmpty else { throw .pipeline("pngenc produced no picture") }
        return png
    }

    private static func lastPicture(_ frames: [([UInt8], UInt64?)], caps: Caps, scaledTo size: (width: Int, height: Int)?,
                                    timeout: Duration) async throws(RecordingError) -> VideoFrame {
        let scale = size.map {
            "videoscale add-borders=true ! video/x-raw,width=\($0.width),height=\($0.height),pixel-aspect-ratio=1/1 ! videoconvert ! "
        } ?? ""
        let decoded = try await run("appsrc name=input ! decodebin ! videoconvert ! \(scale)video/x-raw,format=RGB ! appsink name=output",
                                    input: caps, frames: frames, timeout: timeout)
        guard let picture = decoded.last?.videoFrame() else {
            throw .pipeline("the \(caps.mediaType ?? "video") frames did not decode to a picture")
        }
        return picture
    }

    /// Pushes `frames` through `launch` (an `appsrc name=input` … `appsink name=output`) to the
    /// end of the stream and returns what came out.
    package static func run(_ launch: String, input caps: Caps, frames: [([UInt8], UInt64?)],
                            timeout: Duration) async throws(RecordingError) -> [Sample] {
        let pipeline: Pipeline
        let source: AppSource
        let sink: AppSink
        do throws(GStreamerError) {
            pipeline = try Pipeline(launch: launch)
            guard let input = pipeline.element(named: "input"), let output = pipeline.element(named: "output") else {
                throw .notSupported("the picture pipeline lost its appsrc or appsink")
            }
            source = try AppSource(input)
            try source.configure(caps: caps, isLive: false)
            sink = try AppSink(output)
            try sink.set("sync", false)
            try sink.set("max-buffers", UInt(0))
        } catch {
            throw .gstreamer(error)
        }
        defer { pipeline.stop() }
        let samples = Locked<[Sample]>([])
        // Only the last sample matters; keeping one bounds the memory of a long group of pictures.
        sink.setSampleHandler { sample in samples.withLock { $0 = [sample] } }
        guard pipeline.requestState(.playing) else {
            throw .pipeline("the picture pipeline did not start: \(pipeline.lastError?.description ?? "refused")")
        }
        do throws(GStreamerError) {
            for (data, pts) in frames { try source.push(data, pts: pts, duration: nil) }
            source.endOfStream()
            try await pipeline.waitForEndOfStream(timeout: timeout)
        } catch {
            throw .gstreamer(error)
        }
        return samples.value
    }
}
