import CallEngine
import Foundation
import MediaRuntime
import WebRTC

@_exported import enum MediaPipeline.RecordingFormat
@_exported import struct MediaPipeline.RecordingSummary
@_exported import enum MediaPipeline.RecordingLayout

/// Recording a call from the caller's side, with the call's life written into the file.
extension WebRtcConnection {
    /// Records the call to `url` as `layout` says: by default both directions without
    /// re-encoding (caller video + audio, agent video + audio), hold, mute and transfer periods as
    /// chapters on the media clock, and a stats sidecar (`<file>.stats.ndjson`) once a second.
    /// The recording is finalised when the call ends, or by `stopRecording()`.
    public func startRecording(to url: URL, format: RecordingFormat = .matroska,
                               layout: RecordingLayout = .separateTracks) async throws(ECVError) {
        guard let leg else { throw call.reportedFailure(.RECORDING_FAILED, "startRecording() needs a started room (after startRoom())") }
        let events = call.events()
        do {
            try await leg.startRecording(to: url, format: format, layout: layout, labels: RecordingLabels(local: "caller", remote: "agent")) {
                CallMarkers(recording: $0, events: events)
            }
        } catch {
            throw call.reportedFailure(.RECORDING_FAILED, "cannot record to \(url.path): \(error)", cause: .recording(error.description), underlying: error)
        }
    }

    /// Finalises the recording and returns what it holds; nil when none is running.
    @discardableResult
    public func stopRecording() async throws(ECVError) -> RecordingSummary? {
        do { return try await leg?.stopRecording() } catch {
            throw call.reportedFailure(.RECORDING_FAILED, "the recording was not finalised: \(error)", cause: .recording(error.description), underlying: error)
        }
    }

    /// Writes the current remote video frame as a PNG (needs a running recording with separate
    /// tracks, whose decode branch provides the picture).
    public func snapshot(to url: URL) async throws(ECVError) {
        guard let recording = leg?.recording?.tracks else {
            throw call.reportedFailure(.RECORDING_FAILED, "snapshot() needs a running recording with separate tracks")
        }
        do { try await recording.snapshot(to: url) } catch {
            throw call.reportedFailure(.RECORDING_FAILED, "cannot write the snapshot \(url.path): \(error)", cause: .recording(error.description), underlying: error)
        }
    }
}

/// Turns a call's events into recording chapters: periods for hold, local and remote mutes and
/// photo mode; marks for transfer and flash.
package final class CallMarkers: RecordingCompanion {
    private let task: Task<Void, Never>

    init(recording: CallRecording, events: AsyncStream<VideoCallEvent>) {
        task = Task {
            for await event in events {
                let action: (CallRecording) throws -> Void
                switch event.type {
                case .StartHold: action = { try $0.beginPeriod("hold") }
                case .EndHold: action = { try $0.endPeriod("hold") }
                case .AudioMuted: action = { try $0.beginPeriod("caller audio muted") }
                case .AudioUnmuted: action = { try $0.endPeriod("caller audio muted") }
                case .VideoMuted: action = { try $0.beginPeriod("caller video muted") }
                case .VideoUnmuted: action = { try $0.endPeriod("caller video muted") }
                case .RemoteAudioMuted: action = { try $0.beginPeriod("agent audio muted") }
                case .RemoteAudioUnmuted: action = { try $0.endPeriod("agent audio muted") }
                case .RemoteVideoMuted: action = { try $0.beginPeriod("agent video muted") }
                case .RemoteVideoUnmuted: action = { try $0.endPeriod("agent video muted") }
                case .TakePhotoOn: action = { try $0.beginPeriod("photo") }
                case .TakePhotoOff: action = { try $0.endPeriod("photo") }
                case .TransferPending: action = { try $0.mark("transfer pending") }
                case .TransferCancelled: action = { try $0.mark("transfer cancelled") }
                case .TransferCompleted: action = { try $0.mark("transferred to \(event.data["rtcId"] ?? "?")") }
                case .FlashOn: action = { try $0.mark("flash on") }
                case .FlashOff: action = { try $0.mark("flash off") }
                default: continue
                }
                // A call's last events (a completed transfer) can arrive after the recording closed.
                do { try action(recording) } catch { Logger.debug("recording marker for \(event.type): \(error)") }
            }
        }
    }

    package func stop() { task.cancel() }
    deinit { task.cancel() }
}
