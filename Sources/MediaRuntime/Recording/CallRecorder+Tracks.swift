import Foundation
import GLibCore
import GStreamer
import MediaPipeline
import Synchronization

extension CallRecorder {
    // MARK: Tracks

    /// Feeds `role` from an RTP tee (allow-not-linked) in a running call pipeline. A role that is
    /// attached again (a new tee after a peer rebuild) continues its track in the same file.
    package func attach(_ role: TrackRole, to tee: Element) throws(RecordingError) {
        let (track, previous, origin) = try state.withLock { state throws(RecordingError) in
            try Self.requireRecording(state.phase)
            guard let track = state.recorderTracks[role] else {
                throw .invalidTracks(state.dropped[role].map { "the \(role.rawValue) track was left out of the file: \($0)" }
                                     ?? "the recording has no \(role.rawValue) track")
            }
            return (track, state.taps.removeValue(forKey: role), state.origin!)
        }
        if let previous, previous.tee == tee {
            state.withLock { $0.taps[role] = previous }
            return
        }
        previous?.remove()
        if let caps = tee.staticPad("sink")?.currentCaps, let encoding = caps.structures.first?.string("encoding-name"),
           encoding.uppercased() != track.spec.codec.rawValue {
            throw .trackMismatch(role: role, expected: track.spec.codec.rawValue, got: encoding)
        }
        track.beginNewSource()
        let mapping = MediaClockMapping(origin: origin, reference: tee)
        let tap = try RTPTap(tee: tee) { sample in
            track.push(sample, at: mapping.mediaTime(runningTime: sample.runningTime))
        }
        let kept = state.withLock { state -> (Bool, continued: Bool, displaced: RTPTap?) in
            guard state.phase == .recording else { return (false, false, nil) }
            // A concurrent attach of the same role may have won the race: the newest tap feeds.
            let displaced = state.taps.updateValue(tap, forKey: role)
            return (true, !state.everAttached.insert(role).inserted, displaced)
        }
        kept.displaced?.remove()
        guard kept.0 else {
            tap.remove()
            throw .alreadyStopped
        }
        broadcaster.yield(kept.continued ? .reattached(role) : .attached(role))
        if track.spec.codec.kind == .video { requestKeyFrames(through: tap, until: track) }
    }

    /// Browsers and most WebRTC stacks send a key frame only at the start and when asked, so a
    /// recorder that joins a running stream asks at once (a FIR where negotiated, which libwebrtc
    /// answered sooner than a PLI right after its first key frame), and again while its track
    /// still waits, alternating with a PLI for senders that negotiated only that, up to
    /// `keyFrameRequestLimit` times at that pace. libwebrtc honours one request per 300 ms and drops the rest
    /// (a decoder that attached just before used it up), and a request or the key frame itself
    /// can be lost: asking every 100 ms lands a request within 100 ms of the sender listening again.
    /// After `keyFrameRequestLimit` requests it goes on asking once a second for as long as the
    /// track waits: a sender that sends key frames only when asked (Chromium) would otherwise leave
    /// the track empty for the rest of the call once a few seconds of requests or answers were lost
    /// (seen on a 2-core machine at load 50: nothing written in 15 s).
    private func requestKeyFrames(through tap: RTPTap, until track: RecorderTrack) {
        tap.requestKeyFrame(allHeaders: true)
        let attempts = Mutex(1)
        _ = MainLoop.shared.schedule(every: Self.keyFrameRetryInterval) { [weak self] in
            guard self != nil, !tap.isRemoved, track.isWaitingForKeyFrame else { return false }
            let count = attempts.withLock { count in defer { count += 1 }; return count }
            guard count < Self.keyFrameRequestLimit || count % Self.slowKeyFrameRequestTicks == 0 else { return true }
            // FIR and PLI alternate in both phases.
            let turn = count < Self.keyFrameRequestLimit ? count : count / Self.slowKeyFrameRequestTicks
            tap.requestKeyFrame(allHeaders: turn % 2 == 0)
            return true
        }
    }

    static let keyFrameRetryInterval: Duration = .milliseconds(100)
    static let keyFrameRequestLimit = 50
    /// Past the limit, one request per this many retry intervals (1 s).
    static let slowKeyFrameRequestTicks = 10

    /// Stops feeding `role`; its track stays in the file and can be attached again.
    package func detach(_ role: TrackRole) {
        let tap = state.withLock { $0.taps.removeValue(forKey: role) }
        guard let tap else { return }
        tap.remove()
        broadcaster.yield(.detached(role))
    }

    /// Leaves declared tracks that never received data out of the file, so the header (which
    /// waits for every track) can be written.
    func dropTracksWithoutData(reason: String) {
        let (removed, taps, pipeline, muxer, barrier) = state.withLock { state -> ([RecorderTrack], [RTPTap], Pipeline?, Element?, StartBarrier?) in
            guard state.phase == .recording || state.phase == .stopping else { return ([], [], nil, nil, nil) }
            // Behind a start barrier nothing starts until all have data: there, no data is the test.
            let barrier = state.barrier
            var idle: [RecorderTrack] = []
            for track in state.recorderTracks.values where track.retireIfIdle(behindBarrier: barrier != nil) { idle.append(track) }
            var taps: [RTPTap] = []
            for track in idle {
                state.recorderTracks[track.spec.role] = nil
                state.dropped[track.spec.role] = reason
                if let tap = state.taps.removeValue(forKey: track.spec.role) { taps.append(tap) }
            }
            return (idle, taps, state.pipeline, state.muxer, state.barrier)
        }
        for tap in taps { tap.remove() }
        for track in removed { barrier?.remove(track.spec.role) }
        guard let pipeline, let muxer else { return }
        for track in removed {
            track.remove(from: pipeline, muxer: muxer)
            broadcaster.yield(.trackDropped(track.spec.role, reason: reason))
        }
    }

    static func requireRecording(_ phase: State.Phase) throws(RecordingError) {
        switch phase {
        case .recording: return
        case .idle, .starting: throw .notStarted
        case .stopping, .stopped: throw .alreadyStopped
        }
    }
}
