import GLibCore
import GStreamer
import MediaPipeline
import MediaRuntime
import Synchronization

/// Keeps an `AudioTap` on a call's incoming audio: the stream there now, each new one, and the
/// new session's after a rebuild (whose tees replace the old ones), until stopped or the call ends.
final class FarEndAudioFollower: Sendable {
    private struct State {
        var tap: AudioTap?
        var follow: Task<Void, Never>?
        var stopped = false
    }
    private let state = Mutex(State())
    private let format: AudioFormat
    private let deliver: @Sendable (AudioFrame) -> Void
    private let ended: @Sendable () -> Void

    init(format: AudioFormat, deliver: @escaping @Sendable (AudioFrame) -> Void, ended: @escaping @Sendable () -> Void) {
        self.format = format
        self.deliver = deliver
        self.ended = ended
    }

    /// Taps the stream there now and follows `events` for the next ones.
    func start(current tee: Element?, events: AsyncStream<PeerEvent>) async throws(AppMediaError) {
        if let tee { try await attach(tee) }
        let task = Task { [weak self] in
            for await event in events {
                guard let self else { return }
                switch event {
                case .remoteStream(let stream) where stream.kind == .audio:
                    // A stream that cannot be tapped leaves the app without audio, not the call.
                    do throws(AppMediaError) { try await self.attach(stream.rtpTee) } catch { continue }
                case .rebuilt:
                    self.detach()
                default:
                    break
                }
            }
            // The peer closed: the app's sequence ends.
            self?.stop()
        }
        let stopped = state.withLock { state in
            if !state.stopped { state.follow = task }
            return state.stopped
        }
        if stopped { task.cancel() }
    }

    private func attach(_ tee: Element) async throws(AppMediaError) {
        detach()
        let tap = try await AudioTap(tee: tee, format: format, deliver: deliver)
        let keep = state.withLock { state in
            if state.stopped { return false }
            state.tap = tap
            return true
        }
        if !keep { tap.remove() }
    }

    private func detach() {
        state.withLock { state in defer { state.tap = nil }; return state.tap }?.remove()
    }

    /// Removes the tap and stops following. Idempotent.
    func stop() {
        let (tap, task, first) = state.withLock { state in
            defer { state.tap = nil; state.follow = nil; state.stopped = true }
            return (state.tap, state.follow, !state.stopped)
        }
        tap?.remove()
        task?.cancel()
        if first { ended() }
    }
}

extension PeerConnection {
    /// The far end's decoded audio in `format`, bounded to `capacity` frames (a slow consumer
    /// loses the oldest and never holds up the call). Follows the call across rebuilds; ends with
    /// the call or on `stop()`.
    package func farEndAudio(format: AudioFormat = .speech, capacity: Int = AudioFrameStream.defaultCapacity) async throws(AppMediaError) -> AudioFrameStream {
        guard !isClosed, mediaPipeline != nil else { throw .notRunning("the peer connection has not started") }
        let holder = Mutex<FarEndAudioFollower?>(nil)
        let stream = try AudioFrameStream(format: format, capacity: capacity) {
            holder.withLock { $0 }?.stop()
        }
        let follower = FarEndAudioFollower(format: format, deliver: { [weak stream] frame in stream?.deliver(frame) },
                                           ended: { [weak stream] in stream?.finish() })
        holder.withLock { $0 = follower }
        // Subscribe before looking at the streams that already exist, so none falls in between.
        let events = events()
        let current = currentRemoteRTPTees().first { $0.kind == .audio }?.tee
        do throws(AppMediaError) {
            try await follower.start(current: current, events: events)
        } catch {
            stream.stop()
            throw error
        }
        return stream
    }
}
