import Foundation
import GLibCore
import GStreamer

/// A lip-sync signal and its measurement: a black picture that flashes white for three frames once
/// a period, and silence with a 1 kHz beep of 100 ms starting `audioDelayMs` after each flash, fed
/// live into a sender's application sources (a camera and a microphone's timestamps, exact: from a
/// schedule, not from when a push happened to run); a recording of it is decoded back and each
/// flash paired with the beep nearest to it.
package enum FlashBeep {
    package static let framesPerSecond = 30
    package static let sampleRate = 48_000
    static let samplesPerBuffer = 480

    /// Feeds `video` (I420 320×240 at 30 fps) and `audio` (S16LE mono 48 kHz, 10 ms buffers) in
    /// real time until `duration` passed, stamping buffers from the running time of `clock`'s
    /// pipeline at the start on; the flash comes half-way through each period, the beep
    /// `audioDelayMs` (a multiple of 10, ending before the period does) after it.
    package static func feed(video: AppSource, audio: AppSource, periodSeconds: Int = 1, audioDelayMs: Int = 0,
                            for duration: Duration) async throws {
        guard periodSeconds >= 1, audioDelayMs >= 0, audioDelayMs % 10 == 0, audioDelayMs + 100 < periodSeconds * 500 else {
            throw TestFailure("FlashBeep: audio delay \(audioDelayMs) ms or period \(periodSeconds) s out of range")
        }
        guard let running = video.runningTime else { throw TestFailure("FlashBeep: the sender's pipeline has no clock") }
        let origin = UInt64(running.components.seconds) * 1_000_000_000 + UInt64(running.components.attoseconds / 1_000_000_000)
        let frameSize = 320 * 240
        let black = [UInt8](repeating: 16, count: frameSize) + [UInt8](repeating: 128, count: frameSize / 2)
        let white = [UInt8](repeating: 235, count: frameSize) + [UInt8](repeating: 128, count: frameSize / 2)
        let silence = [UInt8](repeating: 0, count: samplesPerBuffer * 2)
        let frameNs = UInt64(1_000_000_000 / framesPerSecond), bufferNs: UInt64 = 10_000_000
        let flashFrame = periodSeconds * framesPerSecond / 2, beepBuffer = periodSeconds * 50 + audioDelayMs / 10
        let started = ContinuousClock.now
        var frame = 0, buffer = 0
        while ContinuousClock.now - started < duration {
            let frameDue = UInt64(frame) * frameNs, bufferDue = UInt64(buffer) * bufferNs
            let due = min(frameDue, bufferDue)
            let wait = Duration.nanoseconds(Int64(due)) - (ContinuousClock.now - started)
            if wait > .zero { try await Task.sleep(for: wait) }
            if frameDue <= bufferDue {
                let inPeriod = frame % (periodSeconds * framesPerSecond)
                try video.push(inPeriod >= flashFrame && inPeriod < flashFrame + 3 ? white : black, pts: origin + frameDue, duration: frameNs)
                frame += 1
            } else {
                let inPeriod = buffer % (periodSeconds * 100)
                let bytes = inPeriod >= beepBuffer && inPeriod < beepBuffer + 10 ? beep : silence
                try audio.push(bytes, pts: origin + bufferDue, duration: bufferNs)
                buffer += 1
            }
        }
    }

    /// 10 ms of a 1 kHz sine at half scale (whole periods, so every buffer starts at phase 0).
    static let beep: [UInt8] = (0..<samplesPerBuffer).flatMap { index -> [UInt8] in
        let value = Int16(0.5 * Double(Int16.max) * sin(2 * Double.pi * 1000 * Double(index) / Double(sampleRate)))
        return [UInt8(truncatingIfNeeded: value), UInt8(truncatingIfNeeded: value >> 8)]
    }

    /// Times (seconds on the file's timeline) where the decoded track `pad` of `url` turns from
    /// black to bright (video) or from 100 ms of quiet to a sound (audio).
    package static func events(in url: URL, pad: String, isVideo: Bool) async throws -> [Double] {
        let demuxer = url.pathExtension.lowercased() == "mp4" ? "qtdemux" : "matroskademux"
        let format = isVideo ? "videoconvert ! video/x-raw,format=GRAY8"
                             : "audioconvert ! audioresample ! audio/x-raw,format=S16LE,layout=interleaved,rate=\(sampleRate),channels=1"
        let pipeline = try Pipeline(launch: "filesrc location=\(url.path) ! \(demuxer) name=d d.\(pad) ! queue ! decodebin ! \(format) "
                                    + "! appsink name=sink sync=false max-buffers=0 drop=false")
        defer { pipeline.stop() }
        guard let element = pipeline.element(named: "sink") else { throw TestFailure("the decode pipeline has no sink") }
        let sink = try AppSink(element)
        let detector = Locked(OnsetDetector())
        sink.setSampleHandler { sample in
            guard let pts = sample.pts else { return }
            sample.withUnsafeBytes { bytes in
                detector.withLock { isVideo ? $0.frame(bytes, at: pts) : $0.samples(bytes.bindMemory(to: Int16.self), at: pts) }
            }
        }
        try await pipeline.play()
        try await pipeline.waitForEndOfStream(timeout: .seconds(60))
        return detector.value.events
    }

    /// What a recording shows: the flashes of its video track with the most of them, the beeps of
    /// its audio track with the most, and audio minus video (ms) for each flash at or after
    /// `settledAfter` seconds with a beep near it.
    package struct Measurement: Sendable {
        package var flashes: [Double]
        package var beeps: [Double]
        package var offsetsMs: [Double]
    }

    /// Measures `url`, whose tracks the demuxer names `videoPads` and `audioPads`.
    package static func measure(_ url: URL, videoPads: [String], audioPads: [String], settledAfter: Double) async throws -> Measurement {
        var flashes: [Double] = [], beeps: [Double] = []
        for pad in videoPads {
            let found = try await events(in: url, pad: pad, isVideo: true)
            if found.count > flashes.count { flashes = found }
        }
        for pad in audioPads {
            let found = try await events(in: url, pad: pad, isVideo: false)
            if found.count > beeps.count { beeps = found }
        }
        return Measurement(flashes: flashes, beeps: beeps, offsetsMs: offsets(flashes: flashes.filter { $0 >= settledAfter }, beeps: beeps))
    }

    /// Each flash in `flashes` with a beep within `window` seconds either side, and audio minus
    /// video in milliseconds.
    package static func pairs(flashes: [Double], beeps: [Double], window: Double = 0.5) -> [(flash: Double, offsetMs: Double)] {
        flashes.compactMap { flash in
            guard let beep = beeps.min(by: { abs($0 - flash) < abs($1 - flash) }), abs(beep - flash) <= window else { return nil }
            return (flash, (beep - flash) * 1000)
        }
    }

    package static func offsets(flashes: [Double], beeps: [Double], window: Double = 0.5) -> [Double] {
        pairs(flashes: flashes, beeps: beeps, window: window).map(\.offsetMs)
    }

    struct OnsetDetector {
        var events: [Double] = []
        private var bright = true
        private var quietSamples = 0

        /// Bright when the mean of every 16th luma byte passes mid-grey.
        mutating func frame(_ bytes: UnsafeRawBufferPointer, at pts: UInt64) {
            guard !bytes.isEmpty else { return }
            var sum = 0, count = 0
            for index in stride(from: 0, to: bytes.count, by: 16) { sum += Int(bytes[index]); count += 1 }
            let isBright = sum / count > 128
            if isBright, !bright { events.append(Double(pts) / 1e9) }
            bright = isBright
        }

        /// A sound starts at the first sample above a tenth of full scale after 100 ms below it.
        mutating func samples(_ samples: UnsafeBufferPointer<Int16>, at pts: UInt64) {
            for (index, sample) in samples.enumerated() {
                if abs(Int(sample)) > Int(Int16.max) / 10 {
                    if quietSamples >= FlashBeep.sampleRate / 10 {
                        events.append(Double(pts) / 1e9 + Double(index) / Double(FlashBeep.sampleRate))
                    }
                    quietSamples = 0
                } else {
                    quietSamples += 1
                }
            }
        }
    }
}
