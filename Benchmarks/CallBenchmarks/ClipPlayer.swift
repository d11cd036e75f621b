import Foundation
import GLibCore
import GStreamer
import Synchronization

/// Plays one `EncodedClip` into many calls' pre-encoded send graphs from a single thread: every
/// 20 ms it pushes each call's next Opus packet, and each video frame as it falls due, so N calls
/// cost N small buffer copies a tick and no encoder. The appsrcs stamp buffers with the running
/// time they are pushed at, so the loop's timestamps keep rising; a key-frame request (a PLI or
/// FIR from the bot, arriving as a force-key-unit event on the video appsrc) makes that call's
/// next frame the clip's nearest key frame.
final class ClipPlayer: Sendable {
    /// What one call was sent.
    struct Counts: Sendable, Codable, Equatable {
        var video = 0
        var audio = 0
        var keyFrameRequests = 0
    }

    /// One call being fed.
    final class Feed: Sendable {
        let video: AppSource?
        let audio: AppSource
        private let probe: PadProbe?

        private struct State: Sendable {
            var position = 0
            var keyFrameWanted = false
            var counts = Counts()
            var failed = false
        }
        /// The feed's one state: the pacing thread and the key-frame probe's thread share it.
        private let state = Locked(State())

        init(video: AppSource?, audio: AppSource) {
            self.video = video
            self.audio = audio
            let state = self.state
            probe = video?.staticPad("src")?.addKeyFrameRequestProbe {
                state.withLock { $0.keyFrameWanted = true; $0.counts.keyFrameRequests += 1 }
            }
        }

        var counts: Counts { state.withLock { $0.counts } }
        var failed: Bool { state.withLock { $0.failed } }

        /// The next video frame to push: the nearest key frame after a request, else the next one.
        func nextVideoFrame(of clip: EncodedClip) -> EncodedClip.Frame {
            state.withLock { state in
                if state.keyFrameWanted {
                    state.keyFrameWanted = false
                    state.position = clip.nearestKeyFrame(to: state.position)
                }
                defer { state.position = (state.position + 1) % clip.video.count; state.counts.video += 1 }
                return clip.video[state.position]
            }
        }

        func countAudio() { state.withLock { $0.counts.audio += 1 } }
        func fail() { state.withLock { $0.failed = true } }
    }

    let clip: EncodedClip
    private let feeds = Mutex<[String: Feed]>([:])
    private let running = Atomic<Bool>(true)

    init(clip: EncodedClip) {
        self.clip = clip
        let thread = Thread { [self] in self.pace() }
        thread.name = "clip-player"
        thread.start()
    }

    func add(_ feed: Feed, for call: String) { feeds.withLock { $0[call] = feed } }
    func remove(_ call: String) { feeds.withLock { _ = $0.removeValue(forKey: call) } }
    func counts() -> [String: Counts] { feeds.withLock { $0.mapValues(\.counts) } }
    func stop() { running.store(false, ordering: .relaxed) }

    /// One tick per Opus packet (20 ms) on absolute deadlines, so late ticks catch up instead of
    /// drifting; a video frame goes out on each tick at or past its time.
    private func pace() {
        let tick = EncodedClip.audioFrameNanoseconds
        let frameInterval = 1_000_000_000 / UInt64(clip.fps)
        let start = DispatchTime.now().uptimeNanoseconds
        var ticks: UInt64 = 0
        var videoFrames: UInt64 = 0
        while running.load(ordering: .relaxed) {
            let now = DispatchTime.now().uptimeNanoseconds
            let due = start + ticks * tick
            if now < due {
                var pause = timespec(tv_sec: Int((due - now) / 1_000_000_000), tv_nsec: Int((due - now) % 1_000_000_000))
                nanosleep(&pause, nil)
                continue
            }
            let current = feeds.withLock { Array($0.values) }
            let audioPacket = clip.audio[Int(ticks % UInt64(clip.audio.count))]
            let videoDue = start + videoFrames * frameInterval <= due
            for feed in current where !feed.failed {
                do throws(GStreamerError) {
                    try feed.audio.push(audioPacket, pts: nil, duration: tick)
                    feed.countAudio()
                    if videoDue, let video = feed.video {
                        try video.push(feed.nextVideoFrame(of: clip).bytes, pts: nil, duration: frameInterval)
                    }
                } catch {
                    feed.fail() // the call's graph is flushing or gone: its end removes the feed
                }
            }
            if videoDue { videoFrames += 1 }
            ticks += 1
        }
    }
}
