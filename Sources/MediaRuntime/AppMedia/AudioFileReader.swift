import Foundation
import GLibCore
import GStreamer
import MediaPipeline
import Synchronization

/// Decodes any audio file GStreamer can (WAV, Ogg, MP3, FLAC…) to frames in real time for
/// `AudioPlayout`: a pipeline of its own whose appsink waits on the clock, so frames come out at
/// the speed they play and nothing is held in memory beyond a second.
final class AudioFileReader: Sendable {
    /// Frames the reader holds for a playout that is behind (one second).
    static let bufferedFrames = 50

    let frames: AsyncStream<AudioFrame>
    private let pipeline: Pipeline

    init(path: String, format: AudioFormat = .call) async throws(AppMediaError) {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue else {
            throw .file(path: path, reason: "no such file")
        }
        guard FileManager.default.isReadableFile(atPath: path) else { throw .file(path: path, reason: "not readable") }
        let description = "filesrc name=file ! decodebin ! audioconvert ! audioresample ! \(format.caps) "
            + "! audiobuffersplit output-buffer-duration=\(format.frameMilliseconds)/1000 ! appsink name=pcm sync=true max-buffers=4 drop=false"
        let pipeline: Pipeline
        let sink: AppSink
        do throws(GStreamerError) {
            // The path is set as a property, never parsed as launch syntax.
            pipeline = try Pipeline(launch: description)
            guard let file = pipeline.element(named: "file"), let pcm = pipeline.element(named: "pcm") else {
                throw .notSupported("the file decoder lost its filesrc or appsink")
            }
            try file.set("location", path)
            sink = try AppSink(pcm)
        } catch {
            throw .file(path: path, reason: "cannot build a decoder: \(error)")
        }
        let (frames, continuation) = AsyncStream.makeStream(of: AudioFrame.self, bufferingPolicy: .bufferingNewest(Self.bufferedFrames))
        let frameBytes = format.bytesPerFrame
        sink.setSampleHandler({ sample in
            let bytes = sample.bytes
            guard !bytes.isEmpty, bytes.count <= frameBytes else { return }
            continuation.yield(AudioFrame(trusted: format, pts: sample.pts ?? 0, data: bytes))
        }, onEndOfStream: { continuation.finish() })
        self.frames = frames
        self.pipeline = pipeline
        let errors = pipeline.observeMessages { message in
            if case .error = message { continuation.finish() }
        }
        continuation.onTermination = { _ in errors.cancel() }
        do throws(GStreamerError) {
            try await pipeline.play()
        } catch {
            pipeline.stop()
            throw .file(path: path, reason: "cannot be decoded: \(pipeline.lastError.map { "\($0)" } ?? "\(error)")")
        }
    }

    /// The error that ended decoding early, if one did.
    var failure: String? { pipeline.lastError.map { "\($0)" } }

    func close() { pipeline.stop() }
}
