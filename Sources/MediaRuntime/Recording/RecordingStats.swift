import Foundation
import Synchronization

/// One second of a call's transport statistics in one direction, as the peer connection reports
/// them; the recorder adds the media time and the frame rate it counted itself.
package struct DirectionStats: Sendable, Hashable {
    package enum Direction: String, Sendable, Hashable, Codable { case sent, received }

    package var direction: Direction
    /// Bits per second of all media in this direction.
    package var bitrate: Double?
    package var videoBitrate: Double?
    package var audioBitrate: Double?
    /// Cumulative packets lost (as reported by the receiving side for `sent`).
    package var packetsLost: Int?
    /// Round-trip time in seconds, from RTCP.
    package var roundTripTime: Double?
    /// Interarrival jitter in seconds.
    package var jitter: Double?
    /// Audio minus video, in milliseconds, of when this direction's streams are played out
    /// against when they were captured (from the sender reports): positive when audio is late.
    package var audioVideoOffsetMs: Double?

    package init(direction: Direction, bitrate: Double? = nil, videoBitrate: Double? = nil, audioBitrate: Double? = nil,
                packetsLost: Int? = nil, roundTripTime: Double? = nil, jitter: Double? = nil, audioVideoOffsetMs: Double? = nil) {
        self.direction = direction
        self.bitrate = bitrate
        self.videoBitrate = videoBitrate
        self.audioBitrate = audioBitrate
        self.packetsLost = packetsLost
        self.roundTripTime = roundTripTime
        self.jitter = jitter
        self.audioVideoOffsetMs = audioVideoOffsetMs
    }
}

/// How far a track's video has come: frames counted and the timestamp of the newest one.
struct FrameProgress: Sendable {
    var count: Int
    var lastPTS: UInt64
}

/// One line of `<file>.stats.ndjson`.
package struct StatsLine: Sendable, Hashable, Codable {
    /// Media time of the sample, seconds since the recording started.
    package var time: Double
    package var direction: DirectionStats.Direction
    package var bitrate: Double?
    package var videoBitrate: Double?
    package var audioBitrate: Double?
    /// Video frames per second of media time through this direction's depayloader in the recorder.
    package var fps: Double?
    package var packetsLost: Int?
    package var roundTripTime: Double?
    package var jitter: Double?
    /// Audio minus video against their capture times, ms (see `DirectionStats.audioVideoOffsetMs`).
    package var avOffsetMs: Double?
}

/// Writes stats lines as they come, one `write(2)` per line so a crash leaves whole lines.
final class StatsSidecar: Sendable {
    private let writer: LineWriter
    private let url: URL
    private let lastFrames = Mutex<[DirectionStats.Direction: FrameProgress]>([:])

    init(url: URL) throws(RecordingError) {
        self.url = url
        writer = try LineWriter(url: url)
    }

    /// Appends `sample` at media time `time` (ns); `frames` is the direction's video progress.
    /// Throws `cannotWrite` for a line that did not reach the file: one that does not encode (a
    /// number that is not finite) or a write that failed.
    func append(_ sample: DirectionStats, at time: Int64, frames: FrameProgress?) throws(RecordingError) -> StatsLine {
        let fps: Double? = frames.flatMap { frames in
            lastFrames.withLock { last in
                defer { last[sample.direction] = frames }
                guard let previous = last[sample.direction], frames.lastPTS > previous.lastPTS else { return nil }
                let seconds = Double(frames.lastPTS - previous.lastPTS) / 1e9
                return (Double(frames.count - previous.count) / seconds * 10).rounded() / 10
            }
        }
        let line = StatsLine(time: RecordingMarkers.seconds(time), direction: sample.direction, bitrate: sample.bitrate,
                             videoBitrate: sample.videoBitrate, audioBitrate: sample.audioBitrate, fps: fps,
                             packetsLost: sample.packetsLost, roundTripTime: sample.roundTripTime, jitter: sample.jitter,
                             avOffsetMs: sample.audioVideoOffsetMs.map { ($0 * 10).rounded() / 10 })
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let data: Data
        do {
            data = try encoder.encode(line)
        } catch {
            throw .cannotWrite(path: url.path, reason: "a stats line does not encode: \(error)")
        }
        // JSONEncoder only ever produces UTF-8.
        try writer.append(String(decoding: data, as: UTF8.self))
        return line
    }

    func close() { writer.close() }
}
