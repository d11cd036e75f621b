import Foundation
import GLibCore
import GStreamer
import MediaPipeline
import Synchronization

/// Records a call as one picture and one sound, re-encoded: the remote party full-frame with our
/// own picture inset (`compositor`), both parties mixed (`audiomixer`), VP8 and Opus in WebM or
/// Matroska. Inputs are decoded from the same RTP taps the pass-through recorder uses; a side
/// without video leaves the black canvas (or no inset), and the output keeps running regardless.
package final class CompositeRecorder: Sendable {
    package let url: URL
    package let format: RecordingFormat
    package let layout: CompositeLayout
    package let tracks: [RecordedTrack]
    private let options: RecordingOptions
    private let file: RecordingFile
    private let state = Mutex(State())

    private struct State {
        enum Phase { case idle, starting, recording, stopping, stopped }
        var phase = Phase.idle
        var graph: CompositeGraph?
        var inputs: [TrackRole: CompositeInput] = [:]
        var taps: [TrackRole: RTPTap] = [:]
        var origin: ContinuousClock.Instant?
        var failure: String?
        var observation: BusObservation?
    }

    /// `format` must be WebM or Matroska (the composite is VP8, which MP4 cannot hold here).
    package init(url: URL, format: RecordingFormat = .webm, tracks: [RecordedTrack], layout: CompositeLayout = CompositeLayout(),
                options: RecordingOptions = RecordingOptions()) throws(RecordingError) {
        guard format != .mp4 else {
            throw .unsupportedCodec(codec: "VP8", format: .mp4, supported: RecordingFormat.mp4.supportedCodecs.map(\.rawValue))
        }
        try layout.validate()
        try options.validate()
        guard Set(tracks.map(\.role)).count == tracks.count, !tracks.isEmpty else {
            throw .invalidTracks("a composite needs each role at most once and at least one track")
        }
        for track in tracks where track.codec.kind != track.role.kind {
            throw .invalidTracks("\(track.role.rawValue) cannot carry \(track.codec.rawValue)")
        }
        self.url = url
        self.format = format
        self.layout = layout
        self.tracks = tracks
        self.options = options
        file = try RecordingFile(url: url, replaceExisting: options.replaceExisting)
    }

    deinit {
        let (graph, taps) = state.withLock { ($0.graph, Array($0.taps.values)) }
        for tap in taps { tap.remove() }
        graph?.pipeline.stop()
        file.release()
    }

    package var mediaTime: Duration { state.withLock { $0.origin }.map { ContinuousClock.now - $0 } ?? .zero }

    package func start() async throws(RecordingError) {
        try state.withLock { state throws(RecordingError) in
            guard state.phase == .idle else { throw state.phase == .stopped ? .alreadyStopped : .alreadyStarted }
            state.phase = .starting
        }
        do throws(RecordingError) {
            let graph: CompositeGraph
            do throws(GStreamerError) {
                graph = try CompositeGraph(layout: layout, format: format, path: file.path, clusterDuration: options.maxClusterDuration.nanoseconds)
            } catch {
                throw .gstreamer(error)
            }
            var inputs: [TrackRole: CompositeInput] = [:]
            for track in tracks { inputs[track.role] = try CompositeInput(track: track, graph: graph, layout: layout) }
            let observation = graph.pipeline.observeMessages { [weak self] message in
                guard case .error(let info) = message else { return }
                self?.state.withLock { if $0.failure == nil { $0.failure = info.description } }
            }
            state.withLock { state in
                state.graph = graph
                state.inputs = inputs
                state.observation = observation
            }
            do throws(GStreamerError) { try await graph.pipeline.play() } catch { throw .gstreamer(error) }
            state.withLock { state in
                state.origin = .now
                state.phase = .recording
            }
        } catch {
            let graph = state.withLock { state -> CompositeGraph? in
                state.phase = .stopped
                defer { state.graph = nil; state.inputs = [:] }
                return state.graph
            }
            graph?.pipeline.stop()
            file.release()
            throw error
        }
    }

    /// Feeds `role` from an RTP tee; attaching again (after a rebuild) continues the same input.
    package func attach(_ role: TrackRole, to tee: Element) throws(RecordingError) {
        let (input, previous, origin) = try state.withLock { state throws(RecordingError) in
            switch state.phase {
            case .recording: break
            case .idle, .starting: throw .notStarted
            case .stopping, .stopped: throw .alreadyStopped
            }
            guard let input = state.inputs[role] else { throw .invalidTracks("the composite has no \(role.rawValue) input") }
            return (input, state.taps.removeValue(forKey: role), state.origin!)
        }
        if let previous, previous.tee == tee {
            state.withLock { $0.taps[role] = previous }
            return
        }
        previous?.remove()
        if let encoding = tee.staticPad("sink")?.currentCaps?.structures.first?.string("encoding-name"),
           encoding.uppercased() != input.track.codec.rawValue {
            throw .trackMismatch(role: role, expected: input.track.codec.rawValue, got: encoding)
        }
        let mapping = MediaClockMapping(origin: origin, reference: tee)
        let tap = try RTPTap(tee: tee) { sample in input.input.push(sample, at: mapping.mediaTime(runningTime: sample.runningTime)) }
        let kept = state.withLock { state -> (Bool, displaced: RTPTap?) in
            guard state.phase == .recording else { return (false, nil) }
            return (true, state.taps.updateValue(tap, forKey: role))
        }
        kept.displaced?.remove()
        if !kept.0 {
            tap.remove()
            throw .alreadyStopped
        }
    }

    package func detach(_ role: TrackRole) {
        state.withLock { $0.taps.removeValue(forKey: role) }?.remove()
    }

    /// Ends every input and the canvas, waits for the encoders to drain into the file, and
    /// releases the pipeline. The call keeps running.
    @discardableResult
    package func stop(timeout: Duration = .seconds(20)) async throws(RecordingError) -> RecordingSummary {
        let (taps, graph, inputs) = try state.withLock { state throws(RecordingError) in
            switch state.phase {
            case .idle, .starting: throw .notStarted
            case .stopping, .stopped: throw .alreadyStopped
            case .recording: state.phase = .stopping
            }
            defer { state.taps = [:] }
            return (Array(state.taps.values), state.graph, Array(state.inputs.values))
        }
        for tap in taps { tap.remove() }
        let end = mediaTime
        var failure: String?
        if let graph {
            // Inputs first: an aggregator still waiting for an input that never had data is
            // released by its end-of-stream, and then the canvas and silence can end too.
            for input in inputs { input.input.source.endOfStream() }
            for source in graph.baseSources { source.sendEndOfStream() }
            do throws(GStreamerError) {
                try await graph.pipeline.waitForEndOfStream(timeout: timeout)
            } catch {
                failure = "the composite was not finalised: \(error)"
            }
            graph.pipeline.stop()
        }
        for input in inputs { input.input.close() }
        let recordedFailure = state.withLock { state -> String? in
            state.phase = .stopped
            state.observation?.cancel()
            state.observation = nil
            state.graph = nil
            state.inputs = [:]
            return state.failure
        }
        file.release()
        if let failure = failure ?? recordedFailure { throw .pipeline(failure) }
        return RecordingSummary(url: url, format: format, duration: end, fileStart: .zero, tracks: Set(tracks.map(\.role)),
                                droppedTracks: [:], chapters: [], chaptersURL: nil, statsURL: nil, problems: [])
    }
}

/// One decoded input of a composite: `appsrc → depayloader → [parser] → decoder → converter`,
/// linked to a compositor pad (placed full-frame or as the inset) or a mixer pad.
final class CompositeInput: Sendable {
    static let maxLatency: UInt64 = 5_000_000_000
    let track: RecordedTrack
    let input: RTPInput

    init(track: RecordedTrack, graph: CompositeGraph, layout: CompositeLayout) throws(RecordingError) {
        self.track = track
        let prefix = "mix_\(track.role.rawValue)"
        let pipeline = graph.pipeline
        do throws(GStreamerError) {
            let source = try AppSource(name: prefix + "_src", caps: Caps(track.codec.rtpCaps), isLive: true,
                                       maxBytes: 16 << 20, block: false)
            try source.set("leaky-type", "downstream")
            // A live source must answer the latency query with a usable range: with the default
            // maximum of zero, a decoder's latency makes the range invalid, the query fails and
            // the compositor falls back to waiting for every input (a stall while one is missing).
            try source.set("min-latency", Int64(0))
            try source.set("max-latency", Int64(Self.maxLatency))
            input = RTPInput(source: source, isLive: true)
            guard let decoder = track.codec.decoders.first(where: { ElementFactory.find($0) != nil }) else {
                throw GStreamerError.elementNotFound(factory: track.codec.decoders.joined(separator: " or "))
            }
            var chain: [Element] = [source, try Element(factory: track.codec.depayloader, name: prefix + "_depay")]
            if track.codec == .h264 { chain.append(try Element(factory: "h264parse", name: prefix + "_parse")) }
            chain.append(try Element(factory: decoder, name: prefix + "_decode"))
            if track.codec.kind == .video {
                chain.append(try Element(factory: "videoconvert", name: prefix + "_convert"))
            } else {
                chain.append(try Element(factory: "audioconvert", name: prefix + "_convert"))
                chain.append(try Element(factory: "audioresample", name: prefix + "_resample"))
            }
            for element in chain { try pipeline.add(element) }
            for (upstream, downstream) in zip(chain, chain.dropFirst()) { try upstream.link(to: downstream) }
            let aggregator = track.codec.kind == .video ? graph.compositor : graph.mixer
            let pad = try aggregator.requestPad("sink_%u")
            guard let output = chain.last?.staticPad("src") else { throw GStreamerError.padNotFound(element: prefix, pad: "src") }
            try output.link(to: pad)
            if track.role == .remoteVideo {
                try Self.place(pad, x: 0, y: 0, width: layout.width, height: layout.height, zorder: 1)
            } else if track.role == .localVideo {
                let inset = layout.insetFrame
                try Self.place(pad, x: inset.x, y: inset.y, width: inset.width, height: inset.height, zorder: 2)
            }
        } catch {
            throw .gstreamer(error)
        }
    }

    private static func place(_ pad: Pad, x: Int, y: Int, width: Int, height: Int, zorder: UInt) throws(GStreamerError) {
        try pad.set("xpos", x)
        try pad.set("ypos", y)
        try pad.set("width", width)
        try pad.set("height", height)
        try pad.set("zorder", zorder)
    }
}
