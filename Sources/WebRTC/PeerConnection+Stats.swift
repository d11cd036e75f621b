import Foundation
import GStreamer
import MediaPipeline

extension PeerConnection {
    /// A typed stats sample with media kinds mapped from our own pads.
    package func stats() async throws(PeerError) -> PeerStats {
        guard let session else { throw .closed }
        do throws(GStreamerError) {
            let raw = try await session.webrtc.stats()
            var stats = statsSample(raw, kinds: streamKinds(of: session))
            stats.bandwidth = adaptation.bandwidth?.decision
            return stats
        } catch {
            throw .setup("stats: \(error)")
        }
    }

    /// A stats sample at most `maxAge` old: the liveness watch's last one when it is that recent
    /// (it samples every 500 ms or every second while something reads its samples), else a new
    /// one. A recording's once-a-second stats sidecar reads this, so a recording bot asks webrtcbin
    /// for stats once a second, not three times.
    package func stats(reusingWithin maxAge: Duration) async throws(PeerError) -> PeerStats {
        if let last = liveness.lastSample, last.session == session?.number, ContinuousClock.now - last.at <= maxAge { return last.stats }
        return try await stats()
    }

    /// How far apart the far end's audio and video come out of the transport against when its
    /// sender captured them, in ms (audio minus video; positive: audio late); nil until both
    /// kinds have packets and sender reports. A recording writes it into its stats sidecar.
    package var receivedAudioVideoOffsetMs: Double? { session?.receivedAudioVideoOffsetMs }

    /// SSRC → kind of every stream: the descriptions' word, overridden by what the pads carry.
    func streamKinds(of session: PeerSession) -> [UInt: MediaKind] {
        negotiation.sdpKinds.merging(session.ssrcKinds) { _, fromPads in fromPads }
    }

    /// `raw` (webrtcbin's `get-stats`) parsed with the streams' `kinds`, with the negotiated codecs.
    func statsSample(_ raw: Structure, kinds: [UInt: MediaKind]) -> PeerStats {
        var stats = PeerStats(raw: raw, kinds: kinds, timestamp: ProcessInfo.processInfo.systemUptime)
        stats.negotiated = negotiation.negotiated
        return stats
    }
}
