import Foundation
import GLibCore
import GStreamer
import MediaPipeline
import MediaRuntime

/// What a recorder offers the call glue: taps on RTP tees by role.
protocol RecordingTapTarget: Sendable {
    func attach(_ role: TrackRole, to tee: Element) throws(RecordingError)
    func detach(_ role: TrackRole)
}

extension CallRecorder: RecordingTapTarget {}
extension CompositeRecorder: RecordingTapTarget {}

/// Keeps a recorder attached to a call's incoming streams: each `.remoteStream` is attached to
/// its role; on `.rebuilt` the old tees are already gone, so the roles are detached until the
/// new session's streams arrive and continue them.
final class StreamFollower: Sendable {
    private let target: any RecordingTapTarget
    private let issues = Locked<[String]>([])

    init(target: any RecordingTapTarget) { self.target = target }

    /// Streams that could not be attached, in order.
    var problems: [String] { issues.value }

    func attachRemote(_ kind: MediaKind, tee: Element) {
        do throws(RecordingError) {
            try target.attach(.of(kind, local: false), to: tee)
        } catch {
            issues.withLock { $0.append(error.description) }
        }
    }

    func follow(_ events: AsyncStream<PeerEvent>) -> Task<Void, Never> {
        Task { [weak self] in
            for await event in events {
                guard let self else { return }
                switch event {
                case .remoteStream(let stream): self.attachRemote(stream.kind, tee: stream.rtpTee)
                case .rebuilt:
                    self.target.detach(.remoteVideo)
                    self.target.detach(.remoteAudio)
                default: break
                }
            }
        }
    }

    /// Attaches the incoming streams that already exist, then the local outputs: the far end's key
    /// frame takes a round trip and its encoder, ours only our encoder, so the far end is asked first.
    func attachAll(local: [(MediaKind, Element)], remote: [(kind: MediaKind, tee: Element)]) throws(RecordingError) {
        for (kind, tee) in remote { attachRemote(kind, tee: tee) }
        for (kind, tee) in local { try target.attach(.of(kind, local: true), to: tee) }
    }
}
