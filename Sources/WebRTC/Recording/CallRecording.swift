import Foundation
import GLibCore
import GStreamer
import MediaPipeline
import MediaRuntime

extension PeerConnection {
    /// Records this call to `url`: the streams we send (from `outgoingRTPTee`) and the streams we
    /// receive (each `RemoteStream.rtpTee`, now and after every rebuild), without re-encoding,
    /// plus a stats sidecar sampled once a second. Caller and agent use the same call; `labels`
    /// names the two parties in the file ("agent video", "caller audio").
    package func startRecording(to url: URL, format: RecordingFormat = .matroska, labels: RecordingLabels = RecordingLabels(),
                               options: RecordingOptions = RecordingOptions()) async throws(RecordingError) -> CallRecording {
        guard !isClosed, mediaPipeline != nil else { throw .pipeline("the peer connection is not running (start it first)") }
        await waitForNegotiatedCodecs(within: .seconds(10))
        let recorder = try CallRecorder(url: url, format: format, tracks: try recordedTracks(), labels: labels, options: options)
        // Subscribe before looking at the streams that already exist, so none falls in between.
        let events = events()
        try await recorder.start()
        let recording = CallRecording(recorder: recorder, peer: self)
        // Attaching failed: start() throws that error; the recorder stops and releases its file,
        // whose own stop error adds nothing to it.
        try await attachCurrentStreams(to: recording.follower) { _ = try? await recorder.stop() }
        recording.follow(events)
        recording.sampleStats()
        return recording
    }

    /// Attaches what this peer sends and the streams it already receives; a recorder that cannot
    /// take them is stopped, so a failed start leaves no file open.
    func attachCurrentStreams(to follower: StreamFollower, orStop stop: () async -> Void) async throws(RecordingError) {
        let local = [MediaKind.video, .audio].compactMap { kind in outgoingRTPTee(kind).map { (kind, $0) } }
        do throws(RecordingError) {
            try follower.attachAll(local: local, remote: currentRemoteRTPTees())
        } catch {
            await stop()
            throw error
        }
    }

    /// A recording's tracks are made for the codecs the call really uses: one asked for before
    /// the negotiation settled (the offerer's video waits for the answer's codec) waits for it,
    /// bounded, and for nothing once it has.
    private func waitForNegotiatedCodecs(within timeout: Duration) async {
        let deadline = ContinuousClock.now + timeout
        while !isClosed, negotiation.negotiated.isEmpty || (session?.pendingKinds.contains(.video) ?? false), ContinuousClock.now < deadline {
            // Cancelled: the wait ends early and the tracks follow what is known.
            try? await Task.sleep(for: .milliseconds(20))
        }
    }

    /// The tracks of this call: what we send, and what we expect to receive, by kind and codec
    /// (the negotiated one, before a stream of it arrived).
    func recordedTracks() throws(RecordingError) -> [RecordedTrack] {
        let parameters = configuration.media.parameters
        var tracks: [RecordedTrack] = []
        let remote = Dictionary(currentRemoteRTPTees().map { ($0.kind, $0.tee) }, uniquingKeysWith: { first, _ in first })
        for kind in [MediaKind.video, .audio] {
            let configured = negotiation.negotiated[kind]?.encodingName
                ?? (kind == .video ? (media?.videoEncodingName ?? parameters.videoCodec) : AudioCodec.opus.rawValue)
            if let tee = outgoingRTPTee(kind) {
                tracks.append(RecordedTrack(.of(kind, local: true), codec: try RecordedCodec.parse(encodingName: Self.encoding(of: tee) ?? configured)))
            }
            if kind == .audio || parameters.videoCallEnabled {
                let encoding = remote[kind].flatMap(Self.encoding(of:)) ?? configured
                tracks.append(RecordedTrack(.of(kind, local: false), codec: try RecordedCodec.parse(encodingName: encoding)))
            }
        }
        return tracks
    }

    /// The RTP tees of the current session's incoming streams, as the session holds them. Streams
    /// that arrive later come as events.
    func currentRemoteRTPTees() -> [(kind: MediaKind, tee: Element)] {
        session?.incomingRTPTees.map { ($0.kind, $0.tee) } ?? []
    }

    nonisolated static func encoding(of tee: Element) -> String? {
        tee.staticPad("sink")?.currentCaps?.structures.first?.string("encoding-name")
    }
}

/// A running recording of a peer connection's call: the recorder, kept fed with the call's
/// incoming streams across rebuilds, and its stats sidecar. Stop it to finalise the file.
package final class CallRecording: Sendable {
    package let recorder: CallRecorder
    private let peer: PeerConnection
    private let tasks = Locked<[Task<Void, Never>]>([])
    let follower: StreamFollower

    init(recorder: CallRecorder, peer: PeerConnection) {
        self.recorder = recorder
        self.peer = peer
        follower = StreamFollower(target: recorder)
    }

    deinit { for task in tasks.value { task.cancel() } }

    package var url: URL { recorder.url }
    /// Streams that could not be attached (e.g. a codec other than the declared one), in order.
    package var problems: [String] { follower.problems }

    package func mark(_ label: String) throws(RecordingError) { try recorder.mark(label) }
    package func beginPeriod(_ label: String) throws(RecordingError) { try recorder.beginPeriod(label) }
    package func endPeriod(_ label: String) throws(RecordingError) { try recorder.endPeriod(label) }

    /// Writes the current remote picture as a PNG.
    package func snapshot(to url: URL) async throws(RecordingError) { try await recorder.snapshot(to: url, of: .remoteVideo) }

    /// Stops following the call and finalises the file; the call goes on.
    @discardableResult
    package func stop() async throws(RecordingError) -> RecordingSummary {
        let running = tasks.withLock { tasks in defer { tasks = [] }; return tasks }
        for task in running { task.cancel() }
        return try await recorder.stop()
    }

    func follow(_ events: AsyncStream<PeerEvent>) {
        tasks.withLock { $0.append(follower.follow(events)) }
    }

    /// Samples the peer's stats once a second into the stats sidecar, one line per direction. The
    /// liveness watch's own sample is taken when it is under 1.1 s old (it samples at least once a
    /// second while media comes in), so recording adds no `get-stats` of its own; a second that
    /// would repeat the last sample writes nothing.
    func sampleStats() {
        guard recorder.statsURL != nil else { return }
        let task = Task { [weak self, peer] in
            var previous: PeerStats?
            while !Task.isCancelled {
                // Cancelled: the wait ends early and the loop or the guard after it decides.
                try? await Task.sleep(for: .seconds(1))
                guard let self, !Task.isCancelled else { return }
                // No stats (the peer is being rebuilt or closed): the next second tries again.
                guard let stats = try? await peer.stats(reusingWithin: .milliseconds(1100)),
                      stats.timestamp != previous?.timestamp else { continue } // the same sample as last second: nothing new
                let offset = await peer.receivedAudioVideoOffsetMs
                for sample in Self.directionStats(stats, since: previous, receivedAudioVideoOffsetMs: offset) {
                    // A failed write is kept in the recorder's problems and reported in its summary.
                _ = try? self.recorder.record(stats: sample)
                }
                previous = stats
            }
        }
        tasks.withLock { $0.append(task) }
    }

    static func directionStats(_ stats: PeerStats, since previous: PeerStats?, receivedAudioVideoOffsetMs: Double? = nil) -> [DirectionStats] {
        let rates = previous.map { stats.bitrates(since: $0) }
        let sentLost = stats.outbound.compactMap(\.remotePacketsLost)
        let receivedLost = stats.inbound.compactMap(\.packetsLost)
        let sent = DirectionStats(
            direction: .sent, bitrate: rates.map { $0.sent.values.reduce(0, +) }, videoBitrate: rates?.sent[.video],
            audioBitrate: rates?.sent[.audio], packetsLost: sentLost.isEmpty ? nil : sentLost.reduce(0, +),
            roundTripTime: stats.roundTripTime, jitter: stats.outbound.compactMap(\.remoteJitter).max())
        let received = DirectionStats(
            direction: .received, bitrate: rates.map { $0.received.values.reduce(0, +) }, videoBitrate: rates?.received[.video],
            audioBitrate: rates?.received[.audio], packetsLost: receivedLost.isEmpty ? nil : receivedLost.reduce(0, +),
            roundTripTime: stats.roundTripTime, jitter: stats.inbound.compactMap(\.jitter).max(), audioVideoOffsetMs: receivedAudioVideoOffsetMs)
        return [sent, received]
    }
}
