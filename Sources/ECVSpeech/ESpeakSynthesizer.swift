import Foundation
import GLibCore
import GStreamer
import MediaPipeline
import Synchronization

/// Text to speech with espeak-ng through GStreamer's `espeak` element (Debian's
/// `gstreamer1.0-espeak`): a robotic but clear voice, offline, faster than real time on one core.
/// Each `synthesize` runs a short pipeline of its own to the end of the text.
public final class ESpeakSynthesizer: SpeechSynthesizer {
    /// espeak-ng voice name ("en-us", "en", "de", "en-us+f3" for a variant, …).
    public let voice: String
    /// Speed and pitch changes, -100…100 (0: espeak-ng's own), as the element takes them.
    public let rate: Int
    public let pitch: Int
    /// The format clips come out in: 16 kHz mono, what recognisers take (the call resamples).
    public let format = AudioFormat.speech
    /// The longest synthesis waited for.
    static let timeout: Duration = .seconds(30)

    public init(voice: String = "en-us", rate: Int = 0, pitch: Int = 0) throws(AppMediaError) {
        guard !voice.isEmpty, voice.count <= 40, voice.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "+" || $0 == "_") }) else {
            throw .speech("voice name \"\(voice)\"; use an espeak-ng voice such as en-us")
        }
        guard (-100...100).contains(rate) else { throw .speech("rate \(rate); use -100…100") }
        guard (-100...100).contains(pitch) else { throw .speech("pitch \(pitch); use -100…100") }
        do throws(GStreamerError) { try GStreamerRuntime.ensureInitialized() } catch { throw .speech("GStreamer: \(error)") }
        guard ElementFactory.find("espeak") != nil else {
            throw .speech("the GStreamer espeak element is not installed (Debian package gstreamer1.0-espeak; `make deps`)")
        }
        self.voice = voice
        self.rate = rate
        self.pitch = pitch
    }

    public func synthesize(_ text: String) async throws(AppMediaError) -> AudioClip {
        let text = try SpeechText.validated(text)
        let description = "espeak name=tts ! audioconvert ! audioresample ! \(format.caps) ! appsink name=pcm sync=false max-buffers=0 drop=false"
        let pipeline: Pipeline
        let collected = Collected()
        do throws(GStreamerError) {
            pipeline = try Pipeline(launch: description)
            guard let tts = pipeline.element(named: "tts"), let pcm = pipeline.element(named: "pcm") else {
                throw .notSupported("the speech pipeline lost its espeak or appsink")
            }
            try tts.set("text", text)
            try tts.set("voice", voice)
            try tts.set("rate", fromString: String(rate))
            try tts.set("pitch", fromString: String(pitch))
            let limit = format.bytesPerSecond * AudioClip.maximumSeconds
            try AppSink(pcm).setSampleHandler { sample in collected.append(sample.bytes, limit: limit) }
        } catch {
            throw .speech("building the espeak pipeline: \(error)")
        }
        defer { pipeline.stop() }
        do throws(GStreamerError) {
            try await pipeline.play()
            try await pipeline.waitForEndOfStream(timeout: Self.timeout)
        } catch {
            throw .speech("espeak-ng: \(error)")
        }
        return try AudioClip(format: format, data: try collected.bytes())
    }

    /// The samples of one synthesis, bounded.
    private final class Collected: Sendable {
        private let state = Mutex<(bytes: [UInt8], overflow: Bool)>(([], false))
        func append(_ bytes: [UInt8], limit: Int) {
            state.withLock { state in
                if state.bytes.count + bytes.count > limit { state.overflow = true } else { state.bytes += bytes }
            }
        }
        func bytes() throws(AppMediaError) -> [UInt8] {
            let (bytes, overflow) = state.withLock { ($0.bytes, $0.overflow) }
            guard !overflow else { throw .speech("the speech is longer than \(AudioClip.maximumSeconds) s") }
            guard !bytes.isEmpty else { throw .speech("espeak-ng produced no audio") }
            return bytes
        }
    }
}
