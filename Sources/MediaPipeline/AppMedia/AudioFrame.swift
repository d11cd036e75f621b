import Foundation

/// One frame of PCM audio going into or coming out of a call.
public struct AudioFrame: Sendable {
    public let format: AudioFormat
    /// Presentation time in nanoseconds on the call's timeline (the call pipeline's running
    /// time: the same clock the recording and the stats use).
    public let pts: UInt64
    /// Interleaved samples in `format`.
    public let data: [UInt8]

    /// Refuses a frame whose size is not a whole number of samples of `format`, or larger than
    /// one second (an app pushing a clip passes it whole to `AudioClip`, which cuts it).
    public init(format: AudioFormat, pts: UInt64, data: [UInt8]) throws(AppMediaError) {
        let sampleBytes = format.channels * format.sampleFormat.bytesPerSample
        guard !data.isEmpty, data.count % sampleBytes == 0 else {
            throw .invalidFrame("\(data.count) bytes is not a whole number of \(sampleBytes)-byte samples of \(format)")
        }
        guard data.count <= format.bytesPerSecond else {
            throw .invalidFrame("\(data.count) bytes is more than one second of \(format)")
        }
        self.format = format
        self.pts = pts
        self.data = data
    }

    /// Made by the SDK from a buffer it already checked.
    package init(trusted format: AudioFormat, pts: UInt64, data: [UInt8]) {
        self.format = format
        self.pts = pts
        self.data = data
    }

    /// Samples per channel.
    public var sampleCount: Int { data.count / (format.channels * format.sampleFormat.bytesPerSample) }
    /// The frame's length in nanoseconds.
    public var duration: UInt64 { UInt64(sampleCount) * 1_000_000_000 / UInt64(format.sampleRate) }

    /// The samples as Int16 (f32 is scaled and clipped).
    public var int16Samples: [Int16] {
        switch format.sampleFormat {
        case .s16:
            return data.withUnsafeBytes { raw in (0..<(data.count / 2)).map { Int16(littleEndian: raw.loadUnaligned(fromByteOffset: $0 * 2, as: Int16.self)) } }
        case .f32:
            return floatSamples.map { Int16(max(-1, min(1, $0)) * 32767) }
        }
    }

    /// The samples as Float in -1…1.
    public var floatSamples: [Float] {
        switch format.sampleFormat {
        case .s16:
            return int16Samples.map { Float($0) / 32768 }
        case .f32:
            return data.withUnsafeBytes { raw in
                (0..<(data.count / 4)).map { Float(bitPattern: UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: $0 * 4, as: UInt32.self))) }
            }
        }
    }

    /// The frame's RMS level in dBFS (-inf for digital silence, 0 for a full-scale square wave).
    public var levelDBFS: Double {
        let samples = floatSamples
        guard !samples.isEmpty else { return -.infinity }
        let energy = samples.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(samples.count)
        return energy > 0 ? 10 * log10(energy) : -.infinity
    }
}
