import BenchmarkSupport
import ECVRecording
import Foundation
import MediaRuntime

/// Whether each bot's recording holds everything its caller sent while the benchmark measured.
///
/// Per file (named by the call's rtcId) the frames of the caller's video and audio tracks are
/// counted (`RecordingInspector`, the SDK's own reader). A recording is *complete* when both
/// tracks hold at least what the load generator pushed into that call during the window, and no
/// more than 1 % + 2 frames fewer than their own span implies (first to last frame at the clip's
/// rate): a packet lost in the window costs its frame, which shows as a hole in the span.
struct RecordingCount {
    var checked = 0
    var complete = 0
    var videoFramesSent = 0
    var videoFramesRecorded = 0
    var audioFramesSent = 0
    var audioFramesRecorded = 0
    /// Frames the spans imply but the files lack, summed over every file.
    var framesMissing = 0
    /// The first few files that were not complete, with why.
    var problems: [String] = []

    /// `atWindowStart` and `total`: what the load generator had sent each call when the window
    /// began, and by the hangup.
    static func check(directory: URL, fps: Int, atWindowStart: [String: ClipPlayer.Counts], total: [String: ClipPlayer.Counts]) async -> RecordingCount {
        var count = RecordingCount()
        for (call, sent) in total.sorted(by: { $0.key < $1.key }) {
            count.checked += 1
            count.videoFramesSent += sent.video
            count.audioFramesSent += sent.audio
            let url = directory.appendingPathComponent("\(call).mkv")
            guard let info = try? await RecordingInspector.inspect(url, timeout: .seconds(30)) else { // why: reported as the problem
                count.note("\(call): no readable recording")
                continue
            }
            let video = info.videoTracks.first, audio = info.audioTracks.first
            count.videoFramesRecorded += video?.frames ?? 0
            count.audioFramesRecorded += audio?.frames ?? 0
            let start = atWindowStart[call] ?? ClipPlayer.Counts()
            let windowed = ClipPlayer.Counts(video: sent.video - start.video, audio: sent.audio - start.audio)
            let videoMissing = missing(video, rate: Double(fps)), audioMissing = missing(audio, rate: 50)
            count.framesMissing += videoMissing + audioMissing
            if let video, let audio, video.frames >= windowed.video, audio.frames >= windowed.audio,
               videoMissing <= allowance(video.frames), audioMissing <= allowance(audio.frames), info.readProblem == nil {
                count.complete += 1
            } else {
                count.note("\(call): video \(video?.frames ?? 0) frames (window sent \(windowed.video), \(videoMissing) missing in its span), "
                           + "audio \(audio?.frames ?? 0) (window sent \(windowed.audio), \(audioMissing) missing)"
                           + (info.readProblem.map { ", \($0)" } ?? ""))
            }
        }
        return count
    }

    /// Frames the track's span at `rate` implies that it does not hold.
    private static func missing(_ track: RecordedFileInfo.Track?, rate: Double) -> Int {
        guard let track, let first = track.firstTime, let last = track.lastTime else { return 0 }
        return max(0, Int(((last - first) * rate).rounded()) + 1 - track.frames)
    }

    private static func allowance(_ frames: Int) -> Int { frames / 100 + 2 }

    private mutating func note(_ problem: String) {
        if problems.count < 5 { problems.append(problem) }
    }
}
