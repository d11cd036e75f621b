import BenchmarkSupport
import Foundation
import GLibCore
import GStreamer

/// Raw I420 frames in a file: the one input both our pipeline and aiortc encode.
struct RawFrames: Sendable {
    let path: String
    let width: Int
    let height: Int
    let count: Int
    var frameSize: Int { width * height * 3 / 2 }
    static let frameDuration: UInt64 = 1_000_000_000 / 30

    /// Dumps `count` frames of the benchmark's test pattern with gst-launch-1.0.
    static func dump(to path: String, width: Int, height: Int, count: Int) async throws -> RawFrames {
        let launch = "videotestsrc num-buffers=\(count) pattern=\(BenchGraph.pattern) horizontal-speed=\(BenchGraph.horizontalSpeed) "
            + "! video/x-raw,format=I420,width=\(width),height=\(height),framerate=30/1 ! filesink location=\(path)"
        let stderr = path + ".stderr"
        _ = try await ChildProcess.gstLaunch(launch, stderrPath: stderr)
        let frames = RawFrames(path: path, width: width, height: height, count: count)
        let size = (try FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.intValue ?? 0
        guard size == count * frames.frameSize else {
            throw BenchmarkError.failed("\(path) holds \(size) bytes, expected \(count) frames of \(frames.frameSize)")
        }
        return frames
    }

    /// Pushes every frame into `source` at 30 fps (PTS n/30 s), then ends the stream. Runs on its
    /// own thread so the pacing sleeps block nobody else.
    func feed(_ source: AppSource) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            Thread.detachNewThread {
                continuation.resume(with: Result { try pushAll(into: source) })
            }
        }
    }

    private func pushAll(into source: AppSource) throws {
        guard let file = FileHandle(forReadingAtPath: path) else { throw BenchmarkError.failed("cannot open \(path)") }
        defer { try? file.close() }
        let start = MonotonicClock.nanoseconds()
        for index in 0..<count {
            MonotonicClock.sleep(until: start + UInt64(index) * Self.frameDuration)
            guard let data = try file.read(upToCount: frameSize), data.count == frameSize else {
                throw BenchmarkError.failed("\(path) ended before frame \(index)")
            }
            try data.withUnsafeBytes { bytes in
                try source.push(bytes, pts: UInt64(index) * Self.frameDuration, duration: Self.frameDuration)
            }
        }
        source.endOfStream()
    }
}

/// Section 3, our half: the SDK's VP8 and H.264 graphs encoding the raw frames file through an
/// appsrc, paced at 30 fps. `Benchmarks/aiortc/encode_bench.py` encodes the same file.
struct PeerSuite {
    var frames: RawFrames
    var kbps = 800

    static let method = """
        Both sides encode the same raw I420 frames (dumped once per run by gst-launch-1.0 from `videotestsrc pattern=smpte \
        horizontal-speed=4`) at the same size and 800 kbit/s, one frame every 1/30 s. Ours: the SDK's compiled send graph with an \
        appsrc source (`VideoSourceSpec.app`), materialised by `SendMedia`; time per frame = encoder sink pad → the frame's last RTP \
        packet leaving the payloader (pad probes, matched by PTS), since aiortc's `encode()` also packetizes; the encoder alone is \
        shown too, and how long a frame takes from the appsrc to the encoder (conversion, videorate, queue). aiortc: wall time of each `encoder.encode(frame)` call of its own `Vp8Encoder` / `H264Encoder` \
        (`time.perf_counter_ns`), CPU per frame from `time.process_time_ns` around the calls. CPU per frame is not like for like: \
        ours counts the whole process from PLAYING to end-of-stream (reading the file, appsrc copies, conversion, encoder, \
        payloader, probes, tracer), aiortc's only its encode calls. Note the encoders' settings differ as \
        each project ships them: ours vp8enc `deadline=1 cpu-used=-6` and x264enc `speed-preset=ultrafast tune=zerolatency`; \
        aiortc libvpx `cpu-used=-6 deadline=realtime` and libx264 default preset with `tune=zerolatency`.
        """

    func run(log: (String) -> Void) async throws -> PeerSection {
        let timer = SectionTimer()
        var figures: [PeerFigure] = []
        for encoder in [EncoderChoice.vp8, .x264] {
            let bench = try BenchGraph(encoder: encoder, width: frames.width, height: frames.height, kbps: kbps,
                                       source: .app(name: "peer_src"), frames: frames.count)
            let frames = self.frames
            let outcome = try await InProcessRun(bench: bench, timeout: .seconds(Double(frames.count) / 10 + 60)).run { source in
                try await frames.feed(source)
            }
            let encoded = outcome.frames.encodeAndPayload.count
            let pay = encoder == .vp8 ? "rtpvp8pay" : "h264parse → rtph264pay"
            let figure = PeerFigure(codec: encoder.codec, implementation: "ECVKit: \(encoder.factory) → \(pay)",
                                    perFrame: LatencySummary(nanoseconds: outcome.frames.encodeAndPayload),
                                    encoderOnly: LatencySummary(nanoseconds: outcome.frames.encode),
                                    sourceToEncoder: LatencySummary(nanoseconds: outcome.frames.upstream),
                                    cpuMsPerFrame: encoded > 0 ? Double(outcome.cpuPlaying.total) / 1e6 / Double(encoded) : 0)
            figures.append(figure)
            log(String(format: "peer %@ %@: %d frames, p50 %.2f ms (encoder alone %.2f ms; appsrc → encoder %.2f ms), CPU %.2f ms/frame",
                       encoder.codec, encoder.factory, encoded, figure.perFrame?.p50 ?? .nan, figure.encoderOnly?.p50 ?? .nan,
                       figure.sourceToEncoder?.p50 ?? .nan, figure.cpuMsPerFrame))
        }
        return PeerSection(method: Self.method, frames: frames.count, width: frames.width, height: frames.height, kbps: kbps,
                           ours: figures, load: timer.finish())
    }
}
