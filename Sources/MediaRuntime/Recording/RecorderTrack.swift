import Foundation
import GLibCore
import GStreamer
import Synchronization

/// One track inside the recording pipeline: `appsrc → depayloader → parser → taginject → muxer`.
///
/// The appsrc is the track's persistent input: taps come and go (a peer rebuild replaces the
/// incoming RTP tee) while the muxer pad, and so the track in the file, stays the same. Times
/// are the recording's media time, kept monotonic across taps.
final class RecorderTrack: Sendable {
    let spec: RecordedTrack
    let name: String
    let input: RTPInput
    var source: AppSource { input.source }
    let muxerPad: Pad
    private let elements: [Element]
    private let probes: [PadProbe]
    private let state: Locked<State>
    let gop: GroupOfPictures?
    private let gatesKeyFrames: Bool

    private struct State {
        var waitingForKeyFrame = true
        var started = false
        var hasData = false
        var framesThroughDepayloader = 0
        var lastDepayloadedPTS: UInt64?
        var removed = false
        /// The caps the muxer was given; the file's header describes the track with them.
        var format: Caps?
        /// The newest format kept from the muxer (see `keepsFirstFormat`).
        var refusedFormat: Caps?
    }

    /// Builds the chain in `pipeline` and links it to a new request pad of `muxer`.
    /// `onStart` runs once, on the streaming thread, when the first buffer reaches the muxer.
    /// With `gatesKeyFrames`, video starts (and restarts after a new source) at a key frame; with a
    /// `barrier`, nothing passes until every track of the barrier has data, so all tracks start
    /// together (for MP4, whose fragments drop each track's start offset). `onFormatChange` runs
    /// when the stream changes format mid-file (see `keepsFirstFormat`), with the new format.
    init(spec: RecordedTrack, name: String, prefix: String, pipeline: Pipeline, muxer: Element, maxBufferedBytes: UInt64,
         gatesKeyFrames: Bool, barrier: StartBarrier?, onStart: @escaping @Sendable () -> Void,
         onFormatChange: @escaping @Sendable (String) -> Void) throws(RecordingError) {
        self.spec = spec
        self.name = name
        self.gatesKeyFrames = gatesKeyFrames && spec.codec.kind == .video
        let state = Locked(State(waitingForKeyFrame: self.gatesKeyFrames))
        self.state = state
        var created: [Element] = []
        var added: [Element] = []
        do throws(GStreamerError) {
            // Not live: a muxer must see every track before it writes its header, and mp4mux (an
            // aggregator) would otherwise start on a timeout and leave a late track out.
            let source = try AppSource(name: prefix + "_src", caps: Caps(spec.codec.rtpCaps), isLive: false,
                                       maxBytes: maxBufferedBytes, block: false)
            try source.set("leaky-type", "downstream")
            try source.set("max-buffers", UInt64(0))
            input = RTPInput(source: source, isLive: false)
            created.append(source)
            let depayloader = try Element(factory: spec.codec.depayloader, name: prefix + "_depay")
            created.append(depayloader)
            for (index, stage) in spec.codec.parserChain.enumerated() {
                let element = try Element(factory: stage.factory, name: "\(prefix)_parse\(index)")
                for (property, value) in stage.properties { try element.set(property, fromString: value) }
                created.append(element)
            }
            let tagger = try Element(factory: "taginject", name: prefix + "_title")
            try tagger.set("tags", "title=\"\(Self.escaped(name))\"")
            created.append(tagger)
            for element in created {
                try pipeline.add(element)
                added.append(element)
            }
            for (upstream, downstream) in zip(created, created.dropFirst()) { try upstream.link(to: downstream) }
            muxerPad = try muxer.requestPad(spec.role.kind == .video ? "video_%u" : "audio_%u")
            guard let output = tagger.staticPad("src") else { throw .padNotFound(element: tagger.name, pad: "src") }
            try output.link(to: muxerPad)
            elements = created
            let gop = spec.codec.kind == .video ? GroupOfPictures() : nil
            self.gop = gop
            var probes: [PadProbe] = []
            if let counted = depayloader.staticPad("src") {
                probes.append(counted.addBufferProbe { info, _ in
                    state.withLock { state in
                        state.framesThroughDepayloader += 1
                        if let pts = info.pts { state.lastDepayloadedPTS = pts }
                    }
                    return .pass
                })
            }
            probes.append(Self.keepsFirstFormat(output, state: state, onFormatChange: onFormatChange))
            let role = spec.role
            probes.append(output.addBufferProbe(readingData: gop != nil) { info, bytes in
                // A frame without a time cannot be placed on the timeline (h264parse emits some
                // when a stream starts mid-picture), and mp4mux would wait on it for ever.
                guard info.pts != nil else { return .drop }
                state.withLock { $0.hasData = true }
                if let barrier, !barrier.passes(role) { return .drop }
                let (pass, first) = state.withLock { state -> (Bool, Bool) in
                    // A retired track lets nothing more into the muxer (see `retireIfIdle`).
                    guard !state.removed else { return (false, false) }
                    if state.waitingForKeyFrame {
                        guard info.isKeyFrame else { return (false, false) }
                        state.waitingForKeyFrame = false
                    }
                    defer { state.started = true }
                    return (true, !state.started)
                }
                guard pass else { return .drop }
                if let gop, let bytes { gop.add(bytes, pts: info.pts, isKeyFrame: info.isKeyFrame) }
                if first { onStart() }
                return .pass
            })
            self.probes = probes
        } catch {
            for element in added.reversed() { pipeline.stopAndRemove(element) }
            throw .gstreamer(error)
        }
    }

    /// Neither matroskamux nor mp4mux accepts new caps once a track has started, and a WebRTC
    /// sender changes them mid-call: a browser lowers its picture size when its CPU or the path is
    /// short, libwebrtc's H.264 encoder sends new parameter sets after a key-frame request. The
    /// muxer keeps the caps it was first given (the header's description of the track); a later
    /// change of the same codec is not passed on, because the stream itself carries what a decoder
    /// needs: VP8 and VP9 key frames state their size, and H.264 gets its SPS and PPS in-band
    /// (h264parse `config-interval=-1`, see `RecordedCodec.parserChain`).
    private static func keepsFirstFormat(_ pad: Pad, state: Locked<State>,
                                         onFormatChange: @escaping @Sendable (String) -> Void) -> PadProbe {
        pad.addCapsProbe { caps in
            let (decision, report) = state.withLock { state -> (ProbeDecision, Bool) in
                // Until the first frame the caps may still be refined (a depayloader adds the
                // picture size when it sees the first key frame), and the muxer takes that.
                guard state.started, let kept = state.format else {
                    state.format = caps
                    return (.pass, false)
                }
                guard kept != caps else { return (.pass, false) }
                // A dropped caps event is offered again before the next buffer: report each new
                // format once.
                defer { state.refusedFormat = caps }
                return (.drop, state.refusedFormat != caps)
            }
            if report { onFormatChange(Self.summary(of: caps)) }
            return decision
        }
    }

    /// "video/x-h264 640x480": what a format change is reported as.
    static func summary(of caps: Caps) -> String {
        guard let structure = caps.structures.first else { return caps.description }
        guard let width = structure.int("width"), let height = structure.int("height") else { return structure.name }
        return "\(structure.name) \(width)x\(height)"
    }

    private static func escaped(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
    }

    var hasStarted: Bool { state.withLock { $0.started } }
    /// Video that holds back its frames until a key frame arrives (a new source, or the start).
    var isWaitingForKeyFrame: Bool { state.withLock { $0.waitingForKeyFrame || !$0.started } }
    /// Frames out of the depayloader and the timestamp of the newest: frame rate is measured over
    /// media time, because the muxer makes the depayloader run in bursts.
    var depayloadedFrames: FrameProgress? {
        state.withLock { state in state.lastDepayloadedPTS.map { FrameProgress(count: state.framesThroughDepayloader, lastPTS: $0) } }
    }

    /// A new tap feeds this track: video waits for a key frame again, so the file never holds
    /// frames that reference pictures from another source.
    func beginNewSource() {
        state.withLock { if gatesKeyFrames { $0.waitingForKeyFrame = true } }
    }

    /// Copies one RTP packet into the track at media time `time` (nanoseconds).
    func push(_ sample: Sample, at time: Int64) { input.push(sample, at: time) }

    /// Closes the track to the muxer if nothing of it has reached the muxer yet (behind a start
    /// barrier: if it has no data at all), and says whether it did; a track is retired once.
    ///
    /// Why in one step under the track's lock: the key-frame gate lets a first frame through under
    /// the same lock, so a track is either started or retired, never both. A frame let into the
    /// muxer from a track about to be taken out would wait there for the other tracks' data while
    /// this track's elements were being stopped, and stopping the element whose thread waits
    /// there never returns (the pad's stream lock is held by that thread).
    func retireIfIdle(behindBarrier: Bool) -> Bool {
        state.withLock { state in
            let idle = behindBarrier ? !state.hasData : !state.started
            guard idle, !state.removed else { return false }
            state.removed = true
            return true
        }
    }

    /// Takes a retired track (see `retireIfIdle`) out of the running pipeline, releasing its muxer
    /// pad. The probes stay until the elements have stopped, so the closed gate keeps holding
    /// back what is still queued in the track's input.
    func remove(from pipeline: Pipeline, muxer: Element) {
        input.close()
        for element in elements { element.stopForRemoval() }
        if let peer = muxerPad.peer { peer.unlink(from: muxerPad) }
        muxer.releaseRequestPad(muxerPad)
        for element in elements { pipeline.remove(element) }
        for probe in probes { probe.cancel() }
    }

    /// Cancels the probes once the pipeline has stopped.
    func finish() {
        state.withLock { $0.removed = true }
        input.close()
        for probe in probes { probe.cancel() }
    }
}
