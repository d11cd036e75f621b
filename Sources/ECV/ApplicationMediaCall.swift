import Foundation
import MediaPipeline
import MediaRuntime
import WebRTC

/// The call whose media an application reads and writes: the SDK gives it, the app never makes one.
public struct MediaEndpoint: Sendable {
    package let peer: PeerConnection?
    package init(_ peer: PeerConnection?) { self.peer = peer }
}

/// Application media on a call, the same on every product (the ECV caller's `WebRtcConnection`
/// and `VideoCall`, the agent bot's `AgentCall`, the peer model's `MediaConnection`): the far end's
/// audio as PCM frames, audio played into the call, voice activity and barge-in, speech.
/// Every method forwards to the call's one peer connection (see docs/bots-that-talk.md).
public protocol ApplicationMediaCall: Sendable {
    /// The call's media, once it runs (nil before: the methods then throw `.notRunning`).
    var mediaEndpoint: MediaEndpoint { get async }
}

extension ApplicationMediaCall {
    private func peer() async throws(AppMediaError) -> PeerConnection { try await mediaEndpoint.peer.running() }

    /// The far end's decoded audio in `format` (16 kHz mono s16 in 20 ms frames by default, what
    /// speech engines take), with times on the call's timeline. Holds at most `capacity` frames
    /// for a slow reader, then drops the oldest (counted in `droppedFrames`); never holds up the
    /// call or its recording. Follows the call across reconnections; ends with it or on `stop()`.
    public func remoteAudio(format: AudioFormat = .speech, capacity: Int = AudioFrameStream.defaultCapacity) async throws(AppMediaError) -> AudioFrameStream {
        try await peer().farEndAudio(format: format, capacity: capacity)
    }

    /// Plays `clip` into the outgoing audio after what is queued, in real time. The call must
    /// have been set up with `MediaParameters.applicationAudio = true`.
    @discardableResult
    public func play(_ clip: AudioClip, mode: PlayoutMode = .mix, label: String = "clip") async throws(AppMediaError) -> Playback {
        try await peer().play(.clip(clip), mode: mode, label: label)
    }

    /// Plays an audio file (anything GStreamer decodes) into the outgoing audio, in real time.
    @discardableResult
    public func play(file path: String, mode: PlayoutMode = .mix) async throws(AppMediaError) -> Playback {
        try await peer().play(.file(path), mode: mode, label: path)
    }

    /// Plays frames as `frames` produces them, paced in real time (a faster producer waits).
    @discardableResult
    public func play<S: AsyncSequence & Sendable>(frames: S, mode: PlayoutMode = .mix, label: String = "stream") async throws(AppMediaError) -> Playback
        where S.Element == AudioFrame {
        try await peer().play(.sequence(frames), mode: mode, label: label)
    }

    /// Speaks `text` into the call with `synthesizer` (e.g. `ECVSpeech`'s espeak-ng voice).
    @discardableResult
    public func say(_ text: String, with synthesizer: any SpeechSynthesizer, mode: PlayoutMode = .mix) async throws(AppMediaError) -> Playback {
        try await peer().say(text, with: synthesizer, mode: mode)
    }

    /// Stops what plays now and everything queued.
    public func interruptPlayback() async { await mediaEndpoint.peer?.interruptPlayback() }

    /// The far end's voice activity (speech started / stopped, with times on the call's timeline).
    public func voiceActivity(options: VoiceActivityOptions = .standard) async throws(AppMediaError) -> AsyncStream<VoiceActivity> {
        try await peer().voiceActivity(options: options)
    }

    /// Listens to the far end: voice activity and, per utterance, what `transcriber` recognised
    /// (e.g. `ECVSpeech`'s pocketsphinx with a phrase list). Ends with the call or when dropped.
    public func listen(with transcriber: any Transcriber, options: VoiceActivityOptions = .standard,
                       partials: Bool = false) async throws(AppMediaError) -> AsyncStream<Heard> {
        try await peer().listen(with: transcriber, options: options, partials: partials)
    }

    /// Barge-in: while set, the far end starting to speak stops what plays (and the queue); nil turns it off.
    public func setBargeIn(_ options: VoiceActivityOptions?) async throws(AppMediaError) {
        try await peer().setBargeIn(options)
    }

    /// A writer for the app's own pictures as the call's outgoing video (a generated picture, a
    /// virtual camera): the call's video source must be `.app(name: source)`.
    public func videoWriter(source: String) async throws(AppMediaError) -> VideoFrameWriter {
        try await peer().videoWriter(source: source)
    }

    /// The barge-ins so far, with their reaction times.
    public var bargeIns: [BargeIn] { get async { await mediaEndpoint.peer?.bargeIns ?? [] } }
}
