/// How far the send graph's audio processing moves the sound behind its timestamps: webrtcdsp
/// keeps its input's timestamps on output that carries the sound later (its filters' delay).
///
/// Measured on Debian 12 (webrtcdsp over webrtc-audio-processing 0.3) by cross-correlating a tone
/// burst at 48 kHz before and after the element, live and from a file alike, in samples: any
/// processing at all (the high-pass filter and band split) 47, echo cancellation 336 more, noise
/// suppression 288 more, gain control none: 671 (14 ms) with everything on, what an ECVKit
/// sender's audio was recorded late by. Opus's look-ahead (312 samples for `audio-type=voice`)
/// is not here: GstAudioEncoder already stamps opusenc's output that much earlier (a call through
/// `LipSyncTests` came out 6 ms audio-early with it taken off again). `LipSyncTests` checks the
/// whole through a real call into a recording.
public struct SendAudioDelay: Sendable, Hashable {
    public static let sampleRate: UInt64 = 48_000
    static let processingSamples: UInt64 = 47
    static let echoCancellationSamples: UInt64 = 336
    static let noiseSuppressionSamples: UInt64 = 288

    /// Samples at 48 kHz between the sound entering webrtcdsp and the same sound in its output,
    /// by their timestamps (0 without audio processing).
    public var samples: UInt64

    public init(parameters: MediaParameters) {
        var samples: UInt64 = 0
        if !parameters.noAudioProcessing {
            samples += Self.processingSamples
            if parameters.echoCancellationEnabled { samples += Self.echoCancellationSamples }
            if parameters.noiseSuppressionEnabled { samples += Self.noiseSuppressionSamples }
        }
        self.samples = samples
    }

    public var nanoseconds: UInt64 { samples * 1_000_000_000 / Self.sampleRate }
}
