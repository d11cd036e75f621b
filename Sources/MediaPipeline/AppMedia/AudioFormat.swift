/// The PCM layout an application reads from or writes into a call: what a speech engine or an
/// audio pipeline expects, so the SDK converts once (audioconvert/audioresample) instead of
/// every app converting again.
public struct AudioFormat: Sendable, Hashable, CustomStringConvertible {
    public enum SampleFormat: String, Sendable, Hashable {
        /// Signed 16-bit little-endian: what speech recognisers take.
        case s16 = "S16LE"
        /// 32-bit float little-endian, -1…1: what DSP and ML code takes.
        case f32 = "F32LE"

        public var bytesPerSample: Int { self == .s16 ? 2 : 4 }
    }

    /// The rates a call converts to: 16 kHz (speech recognition), 48 kHz (Opus's own rate).
    public static let sampleRates: Set<Int> = [16000, 48000]
    /// The frame durations, in milliseconds, the SDK cuts audio into.
    public static let frameMilliseconds: Set<Int> = [10, 20]

    public let sampleRate: Int
    public let channels: Int
    public let sampleFormat: SampleFormat
    public let frameMilliseconds: Int

    /// Refuses what a call does not convert to, so a typo fails when asked, not on the first frame.
    public init(sampleRate: Int = 16000, channels: Int = 1, sampleFormat: SampleFormat = .s16, frameMilliseconds: Int = 20) throws(AppMediaError) {
        guard Self.sampleRates.contains(sampleRate) else {
            throw .invalidFormat("sample rate \(sampleRate) Hz; use 16000 or 48000")
        }
        guard channels == 1 || channels == 2 else { throw .invalidFormat("\(channels) channels; use 1 (mono) or 2 (stereo)") }
        guard Self.frameMilliseconds.contains(frameMilliseconds) else {
            throw .invalidFormat("\(frameMilliseconds) ms frames; use 10 or 20")
        }
        self.sampleRate = sampleRate
        self.channels = channels
        self.sampleFormat = sampleFormat
        self.frameMilliseconds = frameMilliseconds
    }

    /// For the SDK's own constants, whose values are in range.
    package init(unchecked sampleRate: Int, _ channels: Int, _ sampleFormat: SampleFormat, _ frameMilliseconds: Int) {
        self.sampleRate = sampleRate
        self.channels = channels
        self.sampleFormat = sampleFormat
        self.frameMilliseconds = frameMilliseconds
    }

    /// 16 kHz mono S16, 20 ms: what pocketsphinx, Vosk and Whisper take.
    public static let speech = AudioFormat(unchecked: 16000, 1, .s16, 20)
    /// 48 kHz mono S16, 10 ms: the call's own format (no resampling).
    public static let call = AudioFormat(unchecked: 48000, 1, .s16, 10)

    /// Samples per channel in one frame.
    public var samplesPerFrame: Int { sampleRate * frameMilliseconds / 1000 }
    public var bytesPerFrame: Int { samplesPerFrame * channels * sampleFormat.bytesPerSample }
    /// Bytes in one second of audio.
    public var bytesPerSecond: Int { sampleRate * channels * sampleFormat.bytesPerSample }
    public var frameNanoseconds: UInt64 { UInt64(frameMilliseconds) * 1_000_000 }

    /// GStreamer caps for this layout.
    public var caps: String {
        "audio/x-raw,format=\(sampleFormat.rawValue),layout=interleaved,rate=\(sampleRate),channels=\(channels)"
    }

    public var description: String {
        "\(sampleFormat == .s16 ? "s16" : "f32") \(channels == 1 ? "mono" : "stereo") \(sampleRate / 1000) kHz, \(frameMilliseconds) ms frames"
    }
}
