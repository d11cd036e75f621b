import BenchmarkSupport
import Foundation
import GLibCore
import GStreamer

/// A short clip encoded once, held in memory: video frames (one encoded frame each, key frames
/// marked) and 20 ms Opus packets. The load generator plays it into every call in a loop.
struct EncodedClip: Sendable {
    struct Frame: Sendable {
        var bytes: [UInt8]
        var isKeyFrame: Bool
    }

    var codec: String
    var width: Int
    var height: Int
    var fps: Int
    var video: [Frame]
    var audio: [[UInt8]]
    /// Indices of the key frames in `video`, ascending; the first frame is always one.
    var keyFrames: [Int]

    /// The frame to continue from after a key-frame request at `position`: the nearest key
    /// frame, behind or ahead (the clip loops, so the first frame is also the one after the end).
    func nearestKeyFrame(to position: Int) -> Int {
        let behind = keyFrames.last { $0 <= position } ?? 0
        let ahead = keyFrames.first { $0 > position } ?? video.count
        return position - behind <= ahead - position ? behind : ahead % video.count
    }

    static let audioFrameNanoseconds: UInt64 = 20_000_000
    /// Key frames every 2 s, as the SDK's own encoder sends them.
    static let keyFrameIntervalSeconds = 2

    /// Encodes `seconds` of a moving test pattern at the given size and rate in `codec` (VP8 or
    /// H264, the SDK's encoder settings' essentials) and as much 20 ms Opus.
    static func encode(codec: String, width: Int, height: Int, fps: Int, seconds: Int, kbps: Int) async throws -> EncodedClip {
        let frames = fps * seconds
        let distance = fps * keyFrameIntervalSeconds
        let encoder = codec == "H264"
            ? "x264enc speed-preset=ultrafast tune=zerolatency bitrate=\(kbps) key-int-max=\(distance) ! video/x-h264,profile=constrained-baseline,stream-format=byte-stream,alignment=au"
            : "vp8enc deadline=1 cpu-used=-6 end-usage=cbr lag-in-frames=0 error-resilient=default target-bitrate=\(kbps * 1000) keyframe-max-dist=\(distance)"
        let raw = "video/x-raw,format=I420,width=\(width),height=\(height),framerate=\(fps)/1"
        let description = """
            videotestsrc pattern=ball num-buffers=\(frames) ! \(raw) ! \(encoder) ! appsink name=video sync=false \
            audiotestsrc wave=ticks num-buffers=\(seconds * 50) samplesperbuffer=960 ! audio/x-raw,rate=48000,channels=1 ! \
            opusenc audio-type=voice frame-size=20 ! appsink name=audio sync=false
            """
        let pipeline = try Pipeline(launch: description)
        let video = Locked<[Frame]>([]), audio = Locked<[[UInt8]]>([])
        guard let videoSink = pipeline.element(named: "video"), let audioSink = pipeline.element(named: "audio") else {
            throw BenchmarkError.badInput("the clip pipeline has no appsinks")
        }
        try AppSink(videoSink).setSampleHandler { sample in
            let frame = Frame(bytes: sample.bytes, isKeyFrame: sample.isKeyFrame)
            video.withLock { $0.append(frame) }
        }
        try AppSink(audioSink).setSampleHandler { sample in
            let bytes = sample.bytes
            audio.withLock { $0.append(bytes) }
        }
        try await pipeline.play()
        try await pipeline.waitForEndOfStream(timeout: .seconds(120))
        pipeline.stop()
        let encoded = video.value
        guard encoded.first?.isKeyFrame == true, !audio.value.isEmpty else {
            throw BenchmarkError.badInput("the clip encoded \(encoded.count) video frames (first a key frame: \(encoded.first?.isKeyFrame ?? false)) and \(audio.value.count) audio packets")
        }
        return EncodedClip(codec: codec, width: width, height: height, fps: fps, video: encoded, audio: audio.value,
                           keyFrames: encoded.indices.filter { encoded[$0].isKeyFrame })
    }
}
