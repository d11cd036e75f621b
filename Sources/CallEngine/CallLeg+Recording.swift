import Foundation
import MediaPipeline
import MediaRuntime
import WebRTC

/// What keeps a call's life in its recording while it runs (the caller's chapters from its
/// events); stopped before the recording is finalised.
package protocol RecordingCompanion: Sendable {
    func stop()
}

/// The recording a call leg runs: its file, and what keeps the call's life in it.
package enum ActiveRecording: Sendable {
    case tracks(CallRecording, (any RecordingCompanion)?)
    case composite(CompositeRecording)

    package func stop() async throws(RecordingError) -> RecordingSummary {
        switch self {
        case .tracks(let recording, let companion):
            companion?.stop()
            return try await recording.stop()
        case .composite(let recording):
            return try await recording.stop()
        }
    }

    /// The recording with separate tracks, which holds chapters and marks.
    package var tracks: CallRecording? {
        if case .tracks(let recording, _) = self { recording } else { nil }
    }
}

/// Recording, for every product alike: one recording per leg, finalised when the leg closes.
extension CallLeg {
    /// Records the call as `layout` says; the leg finalises it when it closes. A leg that closes
    /// while the recording starts finalises it and reports the start as failed
    /// (`alreadyStopped`); of two overlapping starts the later is kept and the earlier finalised.
    package func startRecording(to url: URL, format: RecordingFormat, layout: RecordingLayout, labels: RecordingLabels,
                                companion: (@Sendable (CallRecording) -> any RecordingCompanion)? = nil) async throws(RecordingError) {
        guard let peer else { throw .pipeline("the call's media has not started") }
        guard recording == nil else { throw .alreadyStarted }
        let started: ActiveRecording
        switch layout {
        case .separateTracks:
            let recording = try await peer.startRecording(to: url, format: format, labels: labels)
            started = .tracks(recording, companion?(recording))
        case .pictureInPicture:
            started = .composite(try await peer.startCompositeRecording(to: url, format: format))
        }
        switch keepRecording(started) {
        case .closed:
            _ = try await started.stop()
            throw .alreadyStopped
        case .displaced(let earlier?):
            _ = try await earlier.stop()
        case .displaced(nil):
            break
        }
    }

    /// The running recording, if any.
    package var recording: ActiveRecording? { withRecording { $0 } }

    /// Finalises the recording; nil when none runs.
    package func stopRecording() async throws(RecordingError) -> RecordingSummary? {
        guard let recording = takeRecording() else { return nil }
        return try await recording.stop()
    }
}
