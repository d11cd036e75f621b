import ECVRecording
import Foundation
import GStreamer
import MediaPipeline
import MediaRuntime
import MediaTestSupport
import Testing
@testable import WebRTC

/// Audio and video captured together are recorded together: a caller with the SDK's audio
/// processing on (echo cancellation, noise suppression, gain control: 14 ms of delay) sends a live
/// flash/beep signal whose beep comes a known 40 ms after each flash (`FlashBeep`); the far end's
/// recording must show the same 40 ms (39.5-40.5 measured). Before the send graph took that delay
/// off the audio's timestamps (`SendAudioDelay`) it showed 55.5 ms, and with rtpbin's default 4 ms
/// `min-ts-offset` (`SenderReportSync`) 33.5-37.5 ms with the delay and Opus's look-ahead taken off.
@Suite(.serialized) struct LipSyncTests {
    static let knownDelayMs = 40.0
    static let toleranceMs = 5.0

    @Test func recordedOffsetIsTheSignalsOwn() async throws {
        let processing = MediaParameters(videoCallEnabled: true, useSpeakerPhone: false, videoWidth: 320, videoHeight: 240, videoFps: 30)
        let caller = MediaConfiguration(parameters: processing, video: .single(.app(name: "lip_camera")), audio: .app(name: "lip_microphone"),
                                        receiveVideo: .renderer(name: "remote_video"), receiveAudio: .audioSamples(name: "remote_audio"))
        let pair = PeerPair(offerer: caller, answerer: testMedia(audio: .silence))
        try await pair.start()
        let media = try #require(await pair.offerer.media)
        let camera = try AppSource(try #require(media.elements.elements["lip_camera"]))
        let microphone = try AppSource(try #require(media.elements.elements["lip_microphone"]))
        let feeding = Task {
            try await FlashBeep.feed(video: camera, audio: microphone, audioDelayMs: Int(Self.knownDelayMs), for: .seconds(25))
        }
        defer { feeding.cancel() }
        try await waitFor(.connected, on: pair.answerer)
        let url = recordingFile("lip-sync.mkv")
        let recording = try await pair.answerer.startRecording(to: url)
        try await waitForAllTracks(recording)
        try await Task.sleep(for: .seconds(7)) // media time to record: flashes after the sender reports lined the streams up
        try await recording.stop()
        feeding.cancel()
        await pair.close()

        let info = try await RecordingInspector.inspect(url)
        // The first seconds can precede the first sender reports (streams lined up by arrival).
        let measured = try await FlashBeep.measure(url, videoPads: info.videoTracks.map(\.pad), audioPads: info.audioTracks.map(\.pad),
                                                   settledAfter: 3.5)
        let (flashes, beeps, offsets) = (measured.flashes, measured.beeps, measured.offsetsMs)
        print("lip sync: audio minus video \(offsets.map { String(format: "%.1f", $0) }) ms, the signal has \(Self.knownDelayMs) ms")
        #expect(offsets.count >= 2, "flashes \(flashes), beeps \(beeps)")
        // The median, and most flashes: on a loaded machine one packet can come too late for its
        // jitter buffer and one beep or flash land elsewhere.
        let median = offsets.sorted()[offsets.count / 2]
        #expect(abs(median - Self.knownDelayMs) <= Self.toleranceMs, "audio recorded \(median) ms after its flash at the median, the signal has \(Self.knownDelayMs) ms")
        let within = offsets.filter { abs($0 - Self.knownDelayMs) <= Self.toleranceMs }
        #expect(within.count * 3 >= offsets.count * 2, "\(within.count) of \(offsets) within \(Self.toleranceMs) ms of \(Self.knownDelayMs)")
    }
}
