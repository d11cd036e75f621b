/// PCM audio held in memory, played into a call whole: a synthesized sentence, a chime, a prompt.
public struct AudioClip: Sendable {
    /// The longest clip the SDK holds: ten minutes (58 MB at 48 kHz stereo f32), so a runaway
    /// synthesizer or a wrong file fails instead of filling memory.
    public static let maximumSeconds = 600

    public let format: AudioFormat
    public let data: [UInt8]

    public init(format: AudioFormat, data: [UInt8]) throws(AppMediaError) {
        let sampleBytes = format.channels * format.sampleFormat.bytesPerSample
        guard data.count % sampleBytes == 0 else {
            throw .invalidFrame("a clip of \(data.count) bytes is not a whole number of \(sampleBytes)-byte samples of \(format)")
        }
        guard data.count <= format.bytesPerSecond * Self.maximumSeconds else {
            throw .invalidFrame("a clip of \(data.count) bytes is longer than \(Self.maximumSeconds) s of \(format)")
        }
        self.format = format
        self.data = data
    }

    /// 16-bit samples (mono or interleaved stereo) at `sampleRate`.
    public init(samples: [Int16], sampleRate: Int = 16000, channels: Int = 1) throws(AppMediaError) {
        let format = try AudioFormat(sampleRate: sampleRate, channels: channels, sampleFormat: .s16)
        var bytes = [UInt8]()
        bytes.reserveCapacity(samples.count * 2)
        for sample in samples {
            let value = UInt16(bitPattern: sample.littleEndian)
            bytes.append(UInt8(value & 0xff))
            bytes.append(UInt8(value >> 8))
        }
        try self.init(format: format, data: bytes)
    }

    public var duration: Duration {
        .nanoseconds(Int64(data.count) * 1_000_000_000 / Int64(format.bytesPerSecond))
    }

    /// The clip cut into frames of its format, the last one padded with silence; `start` is the
    /// first frame's time.
    public func frames(startingAt start: UInt64 = 0) -> [AudioFrame] {
        let size = format.bytesPerFrame
        var frames: [AudioFrame] = []
        var offset = 0
        var pts = start
        while offset < data.count {
            var chunk = Array(data[offset..<min(offset + size, data.count)])
            if chunk.count < size { chunk += [UInt8](repeating: 0, count: size - chunk.count) }
            frames.append(AudioFrame(trusted: format, pts: pts, data: chunk))
            offset += size
            pts += format.frameNanoseconds
        }
        return frames
    }
}
