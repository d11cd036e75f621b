import Foundation
import GLibCore
import GStreamer
import MediaPipeline

extension CallRecorder {
    // MARK: Markers

    /// A point on the timeline ("transfer requested"), in the file and the chapters sidecar.
    /// A sidecar that cannot be rewritten throws `cannotWrite` (and is one of `problems`); the
    /// mark is in `chapters` and, in Matroska, in the file's markers track all the same.
    package func mark(_ label: String) throws(RecordingError) {
        let (markers, time) = try markersNow()
        try reportingWrites { () throws(RecordingError) in try markers.mark(label, at: time) }
    }

    /// Opens a period such as "hold" or "mute"; opening one that is already open does nothing.
    /// Throws for the chapters sidecar as `mark` does.
    package func beginPeriod(_ label: String) throws(RecordingError) {
        let (markers, time) = try markersNow()
        try reportingWrites { () throws(RecordingError) in try markers.begin(label, at: time) }
    }

    /// Closes the open period `label`; closing one that is not open does nothing.
    /// Throws for the chapters sidecar as `mark` does.
    package func endPeriod(_ label: String) throws(RecordingError) {
        let (markers, time) = try markersNow()
        try reportingWrites { () throws(RecordingError) in try markers.end(label, at: time) }
    }

    /// Marks and periods so far, on the media timeline.
    package var chapters: [RecordingChapter] { state.withLock { $0.markers }?.list ?? [] }

    private func markersNow() throws(RecordingError) -> (RecordingMarkers, Int64) {
        try state.withLock { state throws(RecordingError) in
            try Self.requireRecording(state.phase)
            return (state.markers!, (ContinuousClock.now - state.origin!).nanoseconds)
        }
    }

    // MARK: Stats

    /// Appends one line to the stats sidecar, adding the media time and the frame rate the
    /// recorder counted through this direction's video depayloader since the previous line.
    /// Returns nil without a sidecar; a line that did not reach it throws `cannotWrite` (and is
    /// one of `problems`).
    @discardableResult
    package func record(stats sample: DirectionStats) throws(RecordingError) -> StatsLine? {
        let (sidecar, time, track) = try state.withLock { state throws(RecordingError) in
            try Self.requireRecording(state.phase)
            let role: TrackRole = sample.direction == .sent ? .localVideo : .remoteVideo
            return (state.stats, (ContinuousClock.now - state.origin!).nanoseconds, state.recorderTracks[role])
        }
        guard let sidecar else { return nil }
        return try reportingWrites { () throws(RecordingError) in
            try sidecar.append(sample, at: time, frames: track?.depayloadedFrames)
        }
    }

    // MARK: Stop

    /// Finalises the file: taps leave the call's tees, end-of-stream goes into the recording
    /// pipeline only, and the pipeline is released once the filesink has the end of the file.
    /// The call keeps running. Throws `alreadyStopped` on a second call.
    @discardableResult
    package func stop(timeout: Duration = .seconds(20)) async throws(RecordingError) -> RecordingSummary {
        let taps = try state.withLock { state throws(RecordingError) -> [RTPTap] in
            switch state.phase {
            case .idle, .starting: throw .notStarted
            case .stopping, .stopped: throw .alreadyStopped
            case .recording: state.phase = .stopping
            }
            state.startTimeout?.cancel()
            state.startTimeout = nil
            state.heartbeat?.cancel()
            state.heartbeat = nil
            defer { state.taps = [:] }
            return Array(state.taps.values)
        }
        for tap in taps { tap.remove() }
        let end = mediaTime
        let fileStart = self.fileStart ?? .zero
        dropTracksWithoutData(reason: "no data before the recording stopped")
        let (pipeline, tracks, markers, stats, sink) = state.withLock { state in
            (state.pipeline, Array(state.recorderTracks.values), state.markers, state.stats, state.sink)
        }
        do throws(RecordingError) {
            try markers?.closeAll(at: end.nanoseconds)
        } catch {
            noteProblem(error.description)
        }
        var failure: String?
        if let pipeline {
            for track in tracks { track.source.endOfStream() }
            markers?.endOfStream()
            if tracks.isEmpty && !format.carriesMarkerTrack {
                // Nothing feeds the muxer: end the file at the sink itself.
                sink?.staticPad("sink")?.sendEndOfStream()
            }
            do throws(GStreamerError) {
                try await pipeline.waitForEndOfStream(timeout: timeout)
            } catch {
                failure = "the file was not finalised: \(error)"
            }
            pipeline.stop()
            if failure == nil, format != .mp4 {
                do throws(RecordingError) {
                    // Every title the recorder declared: a track left out of the file on the way
                    // may still have handed the muxer its title.
                    try MatroskaTagRepair.unquoteTitles(self.tracks.map { labels.trackName($0.role) }, inFileAt: file.path)
                } catch {
                    noteProblem(error.description)
                }
            }
        }
        for track in tracks { track.finish() }
        stats?.close()
        let summary = state.withLock { state -> RecordingSummary in
            state.phase = .stopped
            state.busObservation?.cancel()
            state.busObservation = nil
            failure = failure ?? state.failure
            let summary = RecordingSummary(
                url: url, format: format, duration: end, fileStart: fileStart, tracks: Set(tracks.filter(\.hasStarted).map(\.spec.role)),
                droppedTracks: state.dropped, chapters: markers?.list ?? [], chaptersURL: chaptersURL, statsURL: statsURL,
                problems: state.problems)
            state.pipeline = nil
            state.muxer = nil
            state.sink = nil
            state.recorderTracks = [:]
            state.markers = nil
            state.stats = nil
            return summary
        }
        file.release()
        broadcaster.yield(.stopped)
        broadcaster.finish()
        if let failure { throw .pipeline(failure) }
        return summary
    }
}
