import Foundation
import GLibCore
import GStreamer
import MediaPipeline
import MediaTestSupport
import Testing
@testable import WebRTC

enum TestRuntime {
    static let ready: Void = {
        LeakTracer.enableBeforeInitialization()
        try! GStreamerRuntime.ensureInitialized()
    }()
}

/// Two peers wired through loopback signaling, the first one offering.
struct PeerPair {
    let offerer: PeerConnection
    let answerer: PeerConnection
    let signaling: LoopbackSignaling

    init(offerer offererMedia: MediaConfiguration, answerer answererMedia: MediaConfiguration,
         configure: (inout PeerConfiguration) -> Void = { _ in }) {
        _ = TestRuntime.ready
        let signaling = LoopbackSignaling()
        var first = PeerConfiguration(media: offererMedia)
        var second = PeerConfiguration(media: answererMedia)
        configure(&first)
        configure(&second)
        offerer = PeerConnection(configuration: first, role: .offerer, sendSignaling: signaling.first.send)
        answerer = PeerConnection(configuration: second, role: .answerer, sendSignaling: signaling.second.send)
        signaling.connectFirst(to: offerer)
        signaling.connectSecond(to: answerer)
        self.signaling = signaling
    }

    func start(dataChannels: [DataChannelConfig] = []) async throws {
        try await answerer.start(dataChannels: dataChannels)
        try await offerer.start(dataChannels: dataChannels)
    }

    func close() async {
        await offerer.close()
        await answerer.close()
        signaling.close()
    }
}

/// A VP8 pair of `testMedia()` ends, started, whose answerer has shown 30 of the offerer's frames,
/// with the answerer's session: the starting point of tests that then watch or disturb its
/// receive path.
func flowingPair() async throws -> (pair: PeerPair, atAnswerer: RemoteMedia, session: PeerSession) {
    let pair = PeerPair(offerer: testMedia(), answerer: testMedia())
    let atAnswerer = RemoteMedia(pair.answerer)
    try await pair.start()
    try await waitFor(.connected, on: pair.answerer)
    try await eventually(.seconds(10), "frames at the answerer") { atAnswerer.video.count > 30 }
    return (pair, atAnswerer, try #require(await pair.answerer.session))
}

/// Waits until `peer` reports `state`, or fails after `timeout`.
func waitFor(_ state: PeerState, on peer: PeerConnection, timeout: Duration = .seconds(15)) async throws {
    let events = peer.events()
    if await peer.peerState == state { return }
    try await withTimeout(timeout, "\(state)") {
        for await event in events {
            if case .stateChanged(let new) = event, new == state { return }
        }
        throw TestFailure("event stream ended before \(state)")
    }
}


func withTimeout<T: Sendable>(_ timeout: Duration, _ what: String, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: T.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: timeout)
            throw TestFailure("timed out after \(timeout) waiting for \(what)")
        }
        let result = try await group.next()!
        group.cancelAll()
        return result
    }
}

/// The value of `task`, or a failure after `timeout` (the task is cancelled then, so that a stream
/// it iterates ends instead of holding the test).
func value<T: Sendable>(of task: Task<T, Never>, within timeout: Duration, _ what: String) async throws -> T {
    try await withTimeout(timeout, what) {
        await withTaskCancellationHandler { await task.value } onCancel: { task.cancel() }
    }
}

/// Counts frames and remembers the last one, from an appsink.
final class FrameCollector: Sendable {
    private let state = Locked<(count: Int, last: VideoFrame?)>((0, nil))
    var count: Int { state.value.count }
    var last: VideoFrame? { state.value.last }

    func attach(_ sink: AppSink) {
        sink.setSampleHandler { [state] sample in
            let frame = sample.videoFrame()
            state.withLock { $0.count += 1; $0.last = frame }
        }
    }
}

/// Attaches collectors to a peer's incoming streams as they arrive.
final class RemoteMedia: Sendable {
    let video = FrameCollector()
    let audio = SampleCollector()
    private let task: Task<Void, Never>

    init(_ peer: PeerConnection) {
        let events = peer.events()
        let video = self.video, audio = self.audio
        task = Task {
            for await event in events {
                guard case .remoteStream(let stream) = event, let sink = stream.appSink else { continue }
                if stream.kind == .video { video.attach(sink) } else { audio.attach(sink) }
            }
        }
    }
    deinit { task.cancel() }
}

/// Counts audio buffers and keeps the RMS of the latest one (S16LE samples).
final class SampleCollector: Sendable {
    private let state = Locked<(count: Int, rms: Double)>((0, 0))
    var count: Int { state.value.count }
    var lastRMS: Double { state.value.rms }

    func attach(_ sink: AppSink) {
        sink.setSampleHandler { [state] sample in
            let rms = sample.withUnsafeBytes { bytes -> Double in
                let samples = bytes.bindMemory(to: Int16.self)
                guard !samples.isEmpty else { return 0 }
                let sum = samples.reduce(0.0) { $0 + Double($1) * Double($1) }
                return (sum / Double(samples.count)).squareRoot()
            }
            state.withLock { $0.count += 1; $0.rms = rms }
        }
    }
}


/// Counts buffers leaving the sender's element with `role`.
func countBuffers(leaving role: NodeRole, of peer: PeerConnection) async throws -> (PadProbe, Counter) {
    let media = try #require(await peer.media)
    let node = try #require(media.graph.nodes(withRole: role).first)
    let pad = try #require(media.elements.elements[node.id]?.staticPad("src"))
    let counter = Counter()
    let probe = pad.addBufferProbe { _, _ in counter.increment(); return .pass }
    return (probe, counter)
}





/// Small test media: 320×240 video, renderers and sample sinks on the receiving side.
func testMedia(codec: String = "VP8", video: VideoInputs = .single(.testPattern()), bitrate: Int = 0,
               videoEnabled: Bool = true, audio: AudioSourceSpec = .testTone()) -> MediaConfiguration {
    MediaConfiguration(parameters: MediaParameters(videoCallEnabled: videoEnabled, videoWidth: 320, videoHeight: 240,
                                                     videoMaxBitrate: bitrate, videoCodec: codec, noAudioProcessing: true),
                       video: video, audio: audio,
                       receiveVideo: .renderer(name: "remote_video"), receiveAudio: .audioSamples(name: "remote_audio"))
}
