import Foundation
import GLibCore
import GStreamer
import MediaPipeline
import Synchronization

/// Records a call's streams into one file without re-encoding: each track is the RTP a call
/// already sends or receives, depayloaded, parsed and muxed (`RecordingFormat`).
///
/// The recorder runs its own pipeline fed from taps on the call's RTP tees (`attach`), so the
/// call never waits for the disk and never sees the recorder's errors or end-of-stream. Tracks
/// are declared up front (the container header lists them) and attached whenever their stream
/// exists; re-attaching a role after a peer rebuild continues the same track. `stop()`
/// finalises the file (index, duration) and leaves the call running; a recorder released
/// without `stop()` detaches from the call and leaves the file as a killed process would
/// (playable, without index or duration).
package final class CallRecorder: Sendable {
    package let url: URL
    package let format: RecordingFormat
    package let tracks: [RecordedTrack]
    package let labels: RecordingLabels
    package let options: RecordingOptions
    /// `<file>.chapters.json`, when written.
    package var chaptersURL: URL? { options.writesChaptersSidecar ? file.sidecar("chapters.json") : nil }
    /// `<file>.stats.ndjson`, when written.
    package var statsURL: URL? { options.writesStatsSidecar ? file.sidecar("stats.ndjson") : nil }

    let file: RecordingFile
    let id: Int
    let state = Mutex(State())
    let broadcaster = Broadcaster<RecordingEvent>()
    private static let counter = Atomic<Int>(0)

    struct State {
        enum Phase { case idle, starting, recording, stopping, stopped }
        var phase = Phase.idle
        var pipeline: Pipeline?
        var muxer: Element?
        var sink: Element?
        var recorderTracks: [TrackRole: RecorderTrack] = [:]
        var taps: [TrackRole: RTPTap] = [:]
        var markers: RecordingMarkers?
        var stats: StatsSidecar?
        var origin: ContinuousClock.Instant?
        var dropped: [TrackRole: String] = [:]
        var failure: String?
        var problems: [String] = []
        var busObservation: BusObservation?
        var startTimeout: MainLoop.Timer?
        var heartbeat: MainLoop.Timer?
        var barrier: StartBarrier?
        /// Roles that have had a source, so a later attach is reported as a continuation.
        var everAttached: Set<TrackRole> = []
    }

    /// Checks the tracks against the format and reserves the file (created empty now, so a bad
    /// path fails here rather than in the middle of a call).
    package init(url: URL, format: RecordingFormat = .matroska, tracks: [RecordedTrack],
                labels: RecordingLabels = RecordingLabels(), options: RecordingOptions = RecordingOptions()) throws(RecordingError) {
        guard !tracks.isEmpty else { throw .invalidTracks("a recording needs at least one track") }
        try options.validate()
        var roles = Set<TrackRole>()
        for track in tracks {
            guard roles.insert(track.role).inserted else { throw .invalidTracks("\(track.role.rawValue) is declared twice") }
            guard track.codec.kind == track.role.kind else {
                throw .invalidTracks("\(track.role.rawValue) cannot carry \(track.codec.rawValue) (\(track.codec.kind.rawValue))")
            }
            try format.validate(track.codec)
        }
        self.url = url
        self.format = format
        self.tracks = tracks.sorted { TrackRole.allCases.firstIndex(of: $0.role)! < TrackRole.allCases.firstIndex(of: $1.role)! }
        self.labels = labels
        self.options = options
        file = try RecordingFile(url: url, replaceExisting: options.replaceExisting)
        id = Self.counter.add(1, ordering: .relaxed).newValue
    }

    deinit {
        let leftovers = state.withLock { state -> (Pipeline?, [RTPTap]) in
            state.heartbeat?.cancel()
            state.startTimeout?.cancel()
            defer { state.taps = [:]; state.pipeline = nil }
            return (state.pipeline, Array(state.taps.values))
        }
        for tap in leftovers.1 { tap.remove() }
        leftovers.0?.stop()
        file.release()
    }

    /// Every recording event from now on.
    package func events() -> AsyncStream<RecordingEvent> { broadcaster.subscribe() }

    /// Time since the recording started: the timeline of the file, its markers and its stats.
    package var mediaTime: Duration {
        state.withLock { $0.origin }.map { ContinuousClock.now - $0 } ?? .zero
    }

    /// Roles whose track has received data (and so is in the file).
    package var startedTracks: Set<TrackRole> {
        Set(state.withLock { $0.recorderTracks }.filter { $0.value.hasStarted }.keys)
    }

    /// The media time at which the file's own timeline begins: zero for Matroska and WebM, whose
    /// tracks keep their times; for MP4 the moment every track had data (see
    /// `RecordingFormat.mp4`), nil until then. Subtract it from marker and stats times to get
    /// positions in an MP4 file.
    package var fileStart: Duration? {
        let (origin, barrier) = state.withLock { ($0.origin, $0.barrier) }
        guard let origin else { return nil }
        guard let barrier else { return .zero }
        return barrier.openedAt.map { $0 - origin }
    }

    /// The recording pipeline as Graphviz text, for diagnostics.
    package var dot: String { state.withLock { $0.pipeline }?.dotDescription ?? "" }

    // MARK: Start

    /// Builds the recording pipeline and starts writing as soon as every track has data.
    package func start() async throws(RecordingError) {
        try state.withLock { state throws(RecordingError) in
            switch state.phase {
            case .idle: state.phase = .starting
            case .starting, .recording: throw .alreadyStarted
            case .stopping, .stopped: throw .alreadyStopped
            }
        }
        do throws(RecordingError) {
            try await build()
        } catch {
            let pipeline = state.withLock { state -> Pipeline? in
                state.phase = .stopped
                state.busObservation?.cancel()
                defer { state.pipeline = nil; state.recorderTracks = [:] }
                return state.pipeline
            }
            pipeline?.stop()
            file.release()
            broadcaster.finish()
            throw error
        }
    }

    private func build() async throws(RecordingError) {
        do throws(GStreamerError) { try GStreamerRuntime.ensureInitialized() } catch { throw .gstreamer(error) }
        let pipeline = Pipeline(name: "recording\(id)")
        let muxer: Element, sink: Element
        do throws(GStreamerError) {
            muxer = try Element(factory: format.muxerFactory, name: "mux")
            try configure(muxer: muxer)
            sink = try Element(factory: "filesink", name: "file")
            try sink.set("location", file.path)
            // Every block goes to the kernel at once: a killed process loses nothing written.
            try sink.set("buffer-mode", "unbuffered")
            try sink.set("async", false)
            try pipeline.add(muxer)
            try pipeline.add(sink)
            try muxer.link(to: sink)
        } catch {
            throw .gstreamer(error)
        }
        state.withLock { state in
            state.pipeline = pipeline
            state.muxer = muxer
            state.sink = sink
        }
        var built: [TrackRole: RecorderTrack] = [:]
        let barrier = format.alignsTrackStarts ? StartBarrier(roles: Set(tracks.map(\.role))) : nil
        state.withLock { $0.barrier = barrier }
        for track in tracks {
            let role = track.role
            built[role] = try RecorderTrack(
                spec: track, name: labels.trackName(role), prefix: "rec_\(role.rawValue)", pipeline: pipeline, muxer: muxer,
                maxBufferedBytes: options.maxBufferedBytesPerTrack, gatesKeyFrames: !format.alignsTrackStarts, barrier: barrier,
                onStart: { [broadcaster] in broadcaster.yield(.trackStarted(role)) },
                onFormatChange: { [weak self] format in self?.noteFormatChange(of: role, to: format) })
        }
        let markers = try RecordingMarkers(pipeline: pipeline, muxer: format.carriesMarkerTrack ? muxer : nil,
                                           prefix: "rec_markers", sidecar: chaptersURL)
        let stats = try statsURL.map { (url: URL) throws(RecordingError) in try StatsSidecar(url: url) }
        let observation = pipeline.observeMessages { [weak self] message in
            guard case .error(let info) = message, let self else { return }
            self.state.withLock { if $0.failure == nil { $0.failure = info.description } }
            self.broadcaster.yield(.failed(info.description))
        }
        state.withLock { state in
            state.recorderTracks = built
            state.markers = markers
            state.stats = stats
            state.busObservation = observation
        }
        do throws(GStreamerError) {
            try await pipeline.play()
        } catch {
            throw .gstreamer(error)
        }
        let timeout = options.trackStartTimeout
        state.withLock { state in
            state.origin = .now
            state.phase = .recording
            state.startTimeout = MainLoop.shared.schedule(after: timeout) { [weak self] in
                Task { self?.dropTracksWithoutData(reason: "no data within \(timeout)") }
            }
        }
        // The markers track needs its format before the header is written: a first marker gives it.
        markers.write("recording started", at: 0)
        if markers.hasTrack {
            let heartbeat = MainLoop.shared.schedule(every: RecordingMarkers.heartbeatInterval) { [weak self] in
                guard let self, let origin = self.state.withLock({ $0.origin }) else { return false }
                markers.heartbeat(at: (ContinuousClock.now - origin).nanoseconds)
                return true
            }
            state.withLock { $0.heartbeat = heartbeat }
        }
    }

    /// A track's stream changed format: an event, and a marker so a reviewer sees where.
    private func noteFormatChange(of role: TrackRole, to format: String) {
        broadcaster.yield(.formatChanged(role, format: format))
        // Throws once the recording is stopping, when a marker has nowhere to go, or for a chapters
        // sidecar that cannot be written, which `mark` has already put in `problems`.
        try? mark("\(labels.trackName(role)): \(format)")
    }

    /// What went wrong without stopping the recording, in order: a sidecar that could not be
    /// written, titles left quoted in the file. Each also came as a `.failed` event.
    package var problems: [String] { state.withLock { $0.problems } }

    /// Adds `problem` to `problems` and reports it as an event, once: a sidecar on a full disk
    /// fails the same way every second.
    func noteProblem(_ problem: String) {
        let isNew = state.withLock { state -> Bool in
            guard !state.problems.contains(problem) else { return false }
            state.problems.append(problem)
            return true
        }
        if isNew { broadcaster.yield(.failed(problem)) }
    }

    /// Runs a sidecar write, noting a `cannotWrite` it throws as a problem before passing it on.
    @discardableResult
    func reportingWrites<R>(_ write: () throws(RecordingError) -> R) throws(RecordingError) -> R {
        do {
            return try write()
        } catch {
            if case .cannotWrite = error { noteProblem(error.description) }
            throw error
        }
    }

    private func configure(muxer: Element) throws(GStreamerError) {
        let cluster = options.maxClusterDuration.nanoseconds
        switch format {
        case .matroska, .webm:
            try muxer.set("max-cluster-duration", cluster)
            try muxer.set("min-cluster-duration", min(cluster, 500_000_000))
            try muxer.set("writing-app", "ECVKit")
        case .mp4:
            try muxer.set("fragment-duration", UInt(max(1, cluster / 1_000_000)))
        }
    }
}

/// What happens to a recording, in order.
package enum RecordingEvent: Sendable, Equatable {
    case attached(TrackRole)
    /// A role got a new source (e.g. after a peer rebuild) and continues its track.
    case reattached(TrackRole)
    case detached(TrackRole)
    /// The first data of a track reached the muxer.
    case trackStarted(TrackRole)
    /// A declared track was left out of the file.
    case trackDropped(TrackRole, reason: String)
    /// The stream changed format mid-recording (e.g. "video/x-vp8 320x240": a browser lowered its
    /// picture size). The file's header keeps the first format and the stream carries the new one,
    /// which players follow.
    case formatChanged(TrackRole, format: String)
    /// The recording pipeline reported an error (`stop()` then throws it), or a sidecar or the
    /// file's titles could not be written (`CallRecorder.problems`); the call is not affected.
    case failed(String)
    case stopped
}
