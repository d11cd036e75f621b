import Foundation
import GStreamer
import MediaPipeline
import Synchronization

/// The persistent input of a track: an appsrc that taps come and go behind. It follows the
/// stream's RTP caps (payload type and SSRC change with a new source) and keeps times monotonic.
final class RTPInput: Sendable {
    let source: AppSource
    private let isLive: Bool
    private let state = Mutex<(caps: Caps?, lastTime: Int64, closed: Bool)>((nil, -1, false))

    init(source: AppSource, isLive: Bool) {
        self.source = source
        self.isLive = isLive
    }

    /// Packets stamped this little before the recording began are kept at its start: a frame our
    /// encoder made in answer to the recorder's key-frame request was captured a few frames
    /// earlier (queues and encoding), and dropping it would leave the track waiting for the next.
    static let startTolerance: Int64 = 500_000_000

    /// Copies one RTP packet in at media time `time` (nanoseconds). Packets from well before the
    /// recording began, or older than what the input already holds, are skipped.
    func push(_ sample: Sample, at stampedTime: Int64) {
        guard stampedTime >= -Self.startTolerance else { return }
        let time = max(0, stampedTime)
        let caps = sample.caps
        let accepted = state.withLock { state -> (ok: Bool, newCaps: Caps?) in
            guard !state.closed, time >= state.lastTime else { return (false, nil) }
            state.lastTime = time
            guard let caps, caps != state.caps else { return (true, nil) }
            state.caps = caps
            return (true, caps)
        }
        guard accepted.ok else { return }
        if let newCaps = accepted.newCaps {
            // Throws only for a property appsrc lacks; format, is-live and block are all its own.
            try? source.configure(caps: Self.withOpusRate(newCaps), isLive: isLive, maxBytes: 0, block: false)
        }
        // A full queue already leaked its oldest packet; FLUSHING/EOS only happen while stopping.
        try? source.push(sample, pts: UInt64(time))
    }

    func close() { state.withLock { $0.closed = true } }

    /// Opus always runs at 48 kHz in RTP, but rtpopusdepay states a rate only when the caps carry
    /// `sprop-maxcapturerate` (browsers leave it out of their SDP), and the muxers then write an
    /// 8 kHz header; the RTP caps get that field when they lack it.
    static func withOpusRate(_ caps: Caps) -> Caps {
        guard let structure = caps.structures.first, structure.string("encoding-name")?.uppercased() == "OPUS",
              structure.string("sprop-maxcapturerate") == nil,
              // GStreamer's own text plus one string field parses; if it ever did not, the caps as they came still record.
              let completed = try? Caps(caps.description + ", sprop-maxcapturerate=(string)48000") else { return caps }
        return completed
    }
}

/// Holds every track back until all of them have data, then lets everything through.
final class StartBarrier: Sendable {
    private let state: Mutex<(waiting: Set<TrackRole>, openedAt: ContinuousClock.Instant?)>

    init(roles: Set<TrackRole>) { state = Mutex((roles, roles.isEmpty ? .now : nil)) }

    /// When the barrier opened: where the file's timeline begins.
    var openedAt: ContinuousClock.Instant? { state.withLock { $0.openedAt } }

    /// Notes that `role` has data; true once every role has.
    func passes(_ role: TrackRole) -> Bool {
        state.withLock { state in
            if state.openedAt == nil {
                state.waiting.remove(role)
                if state.waiting.isEmpty { state.openedAt = .now }
            }
            return state.openedAt != nil
        }
    }

    /// A role that will never have data (left out of the file) no longer holds the others.
    func remove(_ role: TrackRole) {
        state.withLock { state in
            state.waiting.remove(role)
            if state.waiting.isEmpty, state.openedAt == nil { state.openedAt = .now }
        }
    }
}

/// The frames since the last key frame of a video track, kept encoded: enough to decode the
/// current picture on demand (snapshots) without decoding the stream all the time.
final class GroupOfPictures: Sendable {
    /// Bounds the memory a very long key-frame interval could take.
    static let maxBytes = 32 << 20

    struct Frame: Sendable {
        var data: [UInt8]
        var pts: UInt64?
    }
    private let frames = Mutex<(list: [Frame], bytes: Int)>(([], 0))

    func add(_ bytes: UnsafeRawBufferPointer, pts: UInt64?, isKeyFrame: Bool) {
        let frame = Frame(data: Array(bytes), pts: pts)
        frames.withLock { state in
            if isKeyFrame { state = ([], 0) }
            guard !state.list.isEmpty || isKeyFrame, state.bytes + frame.data.count <= Self.maxBytes else { return }
            state.list.append(frame)
            state.bytes += frame.data.count
        }
    }

    /// The key frame and every frame after it, oldest first.
    var snapshot: [Frame] { frames.withLock { $0.list } }
}
