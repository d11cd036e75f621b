import BenchmarkSupport
import Foundation
import GLibCore
import GStreamer
import MediaPipeline
import Synchronization
import WebRTC

/// Send and receive times of stamped frames, recorded from the sender thread and the renderer's
/// streaming thread.
final class StampTimes: Sendable {
    private struct State {
        var sent: [Int: UInt64] = [:]
        var received: [Int: UInt64] = [:]
        var unreadable = 0
        var firstReceived: UInt64?
    }
    private let state = Mutex(State())

    func sent(_ counter: Int, at time: UInt64) { state.withLock { $0.sent[counter] = time } }

    /// True once the renderer has read a stamp: the decoder has had a keyframe and video flows.
    var hasReadAny: Bool { state.withLock { !$0.received.isEmpty } }

    func attach(_ sink: AppSink) {
        sink.setSampleHandler { [self] sample in
            let now = MonotonicClock.nanoseconds()
            let stride = sample.videoInfo?.strides.first ?? 0
            let counter = sample.withUnsafeBytes { FrameStamp.read(rgba: $0, stride: stride) }
            state.withLock { state in
                guard let counter else {
                    // Before the first readable frame the decoder has had no keyframe: warm-up, not a misread.
                    if !state.received.isEmpty { state.unreadable += 1 }
                    return
                }
                if state.received[counter] == nil { state.received[counter] = now }
                if state.firstReceived == nil { state.firstReceived = now }
            }
        }
    }

    /// Latencies of frames `first..<end` that were both sent and read back, and how many were sent.
    func measured(from first: Int, to end: Int) -> (latencies: [UInt64], sent: Int, unreadable: Int, firstReceived: UInt64?) {
        state.withLock { state in
            let sent = state.sent.filter { (first..<end).contains($0.key) }
            let latencies = sent.keys.sorted().compactMap { counter in state.received[counter].map { $0 - sent[counter]! } }
            return (latencies, sent.count, state.unreadable, state.firstReceived)
        }
    }
}

/// Glass-to-glass latency of one call: a caller sends stamped frames through its compiled send
/// graph (appsrc source), two real `PeerConnection`s negotiate over loopback signaling and carry
/// the media over ICE/DTLS-SRTP on 127.0.0.1, and the agent's renderer reads the stamps back.
struct GlassToGlass {
    static let sourceName = "g2g_src"
    static let rendererName = "g2g_view"
    static let frameInterval: UInt64 = 1_000_000_000 / 30

    var codec: String
    var jitterBufferMs: Int
    var frames: Int
    /// Frames sent at least before measuring (connection ramp-up, first keyframe, jitter buffer
    /// filling); warm-up goes on until the renderer has read a frame.
    var warmupFrames = 30
    /// Frames sent after the measured ones and not counted: the send graph's videorate holds the
    /// newest frame until the next one arrives, so the last frame pushed never leaves it.
    var trailingFrames = 5
    var width = 640
    var height = 480
    /// The agent sends its own test-pattern video and audio back, as in a real call (both directions'
    /// work then shares this machine's cores); otherwise it is a receive-only peer.
    var agentSends = true

    static let method = """
        A caller and an agent `PeerConnection` in this process, negotiated over `LoopbackSignaling`, media over real ICE, \
        DTLS-SRTP and RTP on 127.0.0.1. The caller's video source is an appsrc (`VideoSourceSpec.app`) in its compiled send \
        graph; a thread pushes a frame every 1/30 s with a 16-bit frame counter drawn into the pixels (white/black blocks plus \
        an inverted check row), recording CLOCK_MONOTONIC just before the push. The agent receives with \
        `ReceiveSinkSpec.renderer` (decoder → RGBA appsink, no clock sync); its sample handler records the time and reads the \
        counter. Latency = receive − send per frame: capture-to-render inside the SDK (encode, payload, SRTP, UDP over loopback, \
        jitter buffer, depayload, decode, convert), without camera or display latency. Warm-up (at least 30 frames, and until the renderer has \
        read one: frames decoded before the first keyframe are garbage) and 5 trailing frames are not counted. The agent sends its own test-pattern video and audio back, as in a real call, so \
        this machine does both ends' work for both directions. Jitter buffer = `PeerConfiguration.jitterBufferLatencyMs` (webrtcbin `latency`).
        """

    func run(log: (String) -> Void) async throws -> GlassToGlassFigure {
        let parameters = MediaParameters(videoWidth: width, videoHeight: height, videoCodec: codec, videoCodecHwAcceleration: false,
                                         noAudioProcessing: true)
        let callerMedia = MediaConfiguration(parameters: parameters, video: .single(.app(name: Self.sourceName)), audio: .testTone(),
                                             receiveVideo: .discard, receiveAudio: .discard)
        let agentMedia = MediaConfiguration(parameters: parameters, video: .single(.testPattern()), audio: .testTone(),
                                            receiveVideo: .renderer(name: Self.rendererName), receiveAudio: .discard,
                                            sendsMedia: agentSends)
        let signaling = LoopbackSignaling()
        let caller = PeerConnection(configuration: PeerConfiguration(jitterBufferLatencyMs: jitterBufferMs, media: callerMedia),
                                    role: .offerer, sendSignaling: signaling.first.send)
        let agent = PeerConnection(configuration: PeerConfiguration(jitterBufferLatencyMs: jitterBufferMs, media: agentMedia),
                                   role: .answerer, sendSignaling: signaling.second.send)
        signaling.connectFirst(to: caller)
        signaling.connectSecond(to: agent)
        let times = StampTimes()
        let agentEvents = agent.events()
        let attach = Task {
            for await event in agentEvents {
                if case .remoteStream(let stream) = event, stream.kind == .video, let sink = stream.appSink {
                    times.attach(sink)
                    return
                }
            }
        }
        defer { attach.cancel() }

        let started = MonotonicClock.nanoseconds()
        var measuredFrames = 0..<0
        do {
            try await agent.start()
            try await caller.start()
            try await Self.waitUntilConnected(caller, timeout: .seconds(20))
            guard let media = await caller.media, let element = media.elements.elements[Self.sourceName] else {
                throw BenchmarkError.failed("the caller's send graph has no \(Self.sourceName)")
            }
            let source = try AppSource(element)
            measuredFrames = try await send(into: source, times: times)
            // Frames still in flight: the jitter buffer holds them at least its latency.
            try await Task.sleep(for: .milliseconds(jitterBufferMs + 500))
        } catch {
            await caller.close()
            await agent.close()
            signaling.close()
            throw BenchmarkError.failed("\(codec) glass-to-glass: \(error)")
        }
        await caller.close()
        await agent.close()
        signaling.close()

        let result = times.measured(from: measuredFrames.lowerBound, to: measuredFrames.upperBound)
        let figure = GlassToGlassFigure(
            codec: codec, width: width, height: height, kbps: parameters.effectiveVideoMaxBitrateKbps, jitterBufferMs: jitterBufferMs,
            framesSent: result.sent, framesReceived: result.latencies.count, framesUnreadable: result.unreadable,
            latency: LatencySummary(nanoseconds: result.latencies),
            firstFrameSeconds: result.firstReceived.map { Double($0 - started) / 1e9 })
        log(String(format: "g2g %@ jitter buffer %d ms: %d/%d frames read, %d unreadable, p50 %.1f ms, p95 %.1f ms, p99 %.1f ms",
                   codec, jitterBufferMs, figure.framesReceived, figure.framesSent, figure.framesUnreadable,
                   figure.latency?.p50 ?? .nan, figure.latency?.p95 ?? .nan, figure.latency?.p99 ?? .nan))
        return figure
    }

    /// Pushes frames at 30 fps from a dedicated thread (its pacing sleeps block nobody), PTS = the
    /// pipeline's running time at the push: warm-up frames until at least `warmupFrames` were sent
    /// and the renderer has read one (frames decoded before the first keyframe reaches the decoder
    /// are grey garbage), then the measured frames, then the trailing ones. Returns the measured
    /// counters.
    private func send(into source: AppSource, times: StampTimes) async throws -> Range<Int> {
        let stamp = FrameStamp(width: width, height: height)
        let (warmup, measured, trailing) = (warmupFrames, frames, trailingFrames)
        return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Range<Int>, any Error>) in
            Thread.detachNewThread {
                continuation.resume(with: Result {
                    var frame = stamp.blankFrame()
                    let start = MonotonicClock.nanoseconds()
                    var counter = 0
                    func push() throws {
                        stamp.draw(counter, into: &frame)
                        MonotonicClock.sleep(until: start + UInt64(counter) * Self.frameInterval)
                        guard let runningTime = source.runningTime else { throw BenchmarkError.failed("the caller's pipeline has no clock") }
                        let pts = UInt64(runningTime.components.seconds) * 1_000_000_000
                            + UInt64(runningTime.components.attoseconds / 1_000_000_000)
                        times.sent(counter, at: MonotonicClock.nanoseconds())
                        try source.push(frame, pts: pts, duration: Self.frameInterval)
                        counter += 1
                    }
                    while counter < warmup || !times.hasReadAny {
                        guard counter < Self.warmupLimit else {
                            throw BenchmarkError.failed("no stamped frame reached the renderer in \(Self.warmupLimit) frames")
                        }
                        try push()
                    }
                    let first = counter
                    while counter < first + measured + trailing { try push() }
                    return first..<(first + measured)
                })
            }
        }
    }

    /// Warm-up gives up after this many frames (20 s).
    static let warmupLimit = 600

    static func waitUntilConnected(_ peer: PeerConnection, timeout: Duration) async throws {
        let events = peer.events()
        if await peer.peerState == .connected { return }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for await event in events {
                    if case .stateChanged(let state) = event {
                        if state == .connected { return }
                        if state == .failed || state == .closed { throw BenchmarkError.failed("the call went \(state)") }
                    }
                }
                throw BenchmarkError.failed("the caller's events ended before it connected")
            }
            group.addTask {
                try await Task.sleep(for: timeout)
                throw BenchmarkError.failed("not connected within \(timeout)")
            }
            try await group.next()
            group.cancelAll()
        }
    }
}
