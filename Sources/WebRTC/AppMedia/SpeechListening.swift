import GLibCore
import MediaPipeline
import MediaRuntime

extension PeerConnection {
    /// Listens to the far end: its audio in the transcriber's format, cut into utterances by the
    /// voice activity detector, each recognised by `transcriber`. Ends with the call or when the
    /// consumer stops; a transcriber error ends it too (the call goes on).
    package func listen(with transcriber: any Transcriber, options: VoiceActivityOptions = .standard,
                       partials: Bool = false) async throws(AppMediaError) -> AsyncStream<Heard> {
        let audio = try await farEndAudio(format: transcriber.inputFormat, capacity: AudioFrameStream.capacityRange.upperBound)
        let (heard, continuation) = AsyncStream.makeStream(of: Heard.self, bufferingPolicy: .bufferingNewest(256))
        let playedAudio = applicationMedia.playedAudio
        let task = Task {
            var cutter = UtteranceTranscription(transcriber: transcriber, options: options, partials: partials, playedAudio: playedAudio)
            for await frame in audio {
                do throws(AppMediaError) {
                    let (activity, transcripts) = try cutter.process(frame)
                    if let activity { continuation.yield(.activity(activity)) }
                    for transcript in transcripts { continuation.yield(.transcript(transcript)) }
                } catch {
                    break
                }
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in
            task.cancel()
            audio.stop()
        }
        return heard
    }
}
