// ecv-recording-probe: runs a loopback call in this process and records it until killed.
//
//   ecv-recording-probe <output file> [VP8|VP9|H264] [matroska|webm|mp4]
//
// Prints "recording <seconds since 1970 at media time zero> <media time where the file's timeline
// begins, seconds>" once all tracks are in the file,
// then keeps recording until the process is killed (the recording tests send SIGKILL and check
// that the file still plays). Exit status 1 with a message on stderr when the call or the
// recording cannot start. A probe whose parent (the test) went away, or that has run for two
// minutes, exits by itself so it never outlives its test.
import Foundation
import GStreamer
import MediaPipeline
import MediaRuntime
import WebRTC

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("ecv-recording-probe: \(message)\n".utf8))
    exit(1)
}

let arguments = CommandLine.arguments.dropFirst()
guard let path = arguments.first else { fail("usage: ecv-recording-probe <output file> [VP8|VP9|H264] [matroska|webm|mp4]") }
let codec = arguments.dropFirst().first ?? "VP8"
let formatName = arguments.dropFirst(2).first ?? "matroska"
guard let format = RecordingFormat(rawValue: formatName) else { fail("unknown format \(formatName)") }

func media(pattern: String) -> MediaConfiguration {
    MediaConfiguration(parameters: MediaParameters(videoCallEnabled: true, videoWidth: 320, videoHeight: 240,
                                                     videoCodec: codec, noAudioProcessing: true),
                       video: .single(.testPattern(pattern: pattern)), audio: .testTone())
}

let signaling = LoopbackSignaling()
let caller = PeerConnection(configuration: PeerConfiguration(media: media(pattern: "ball")), role: .offerer,
                            sendSignaling: signaling.first.send)
let agent = PeerConnection(configuration: PeerConfiguration(media: media(pattern: "smpte")), role: .answerer,
                           sendSignaling: signaling.second.send)
signaling.connectFirst(to: caller)
signaling.connectSecond(to: agent)

do {
    try await agent.start()
    try await caller.start()
} catch {
    fail("the call did not start: \(error)")
}

let recording: CallRecording
do {
    recording = try await agent.startRecording(to: URL(fileURLWithPath: path), format: format,
                                               labels: RecordingLabels(local: "agent", remote: "caller"),
                                               options: RecordingOptions(replaceExisting: true))
} catch {
    fail("the recording did not start: \(error)")
}
let zero = Date().timeIntervalSince1970 - recording.recorder.mediaTime.seconds

let deadline = ContinuousClock.now + .seconds(30)
while recording.recorder.startedTracks.count < recording.recorder.tracks.count {
    guard ContinuousClock.now < deadline else { fail("only \(recording.recorder.startedTracks) tracks started") }
    try? await Task.sleep(for: .milliseconds(100))
}
FileHandle.standardOutput.write(Data("recording \(zero) \(recording.recorder.fileStart?.seconds ?? 0)\n".utf8))
let parent = getppid()
let lifetime = ContinuousClock.now + .seconds(120)
while getppid() == parent, ContinuousClock.now < lifetime { try? await Task.sleep(for: .milliseconds(500)) }
fail("the test that started this probe is gone (or two minutes passed); stopping")
