/// What a listening bot hears: the far end's voice activity and, per utterance, what it said.
public enum Heard: Sendable, Equatable {
    case activity(VoiceActivity)
    case transcript(Transcript)
}

/// Cuts the far end's audio into utterances with a voice activity detector and hands each to a
/// `Transcriber` session: the frames from a little before the detected start (the detector needs
/// `minimumSpeech` to be sure, and a word's soft beginning is quieter than its middle) to the end
/// of speech. Pure: the caller feeds frames, it returns what was recognised.
public struct UtteranceTranscription {
    /// Audio kept from before the detected start, fed first.
    public static let preroll: UInt64 = 300_000_000

    private var detector: VoiceActivityDetector
    private let transcriber: any Transcriber
    private let partials: Bool
    private var recent: [AudioFrame] = []
    private var session: (any TranscriptionSession)?

    public init(transcriber: any Transcriber, options: VoiceActivityOptions = .standard, partials: Bool = false) {
        self.init(transcriber: transcriber, options: options, partials: partials, playedAudio: nil)
    }

    /// One whose detector knows the call's played audio (see `VoiceActivityOptions.ignoresOwnEcho`).
    package init(transcriber: any Transcriber, options: VoiceActivityOptions, partials: Bool, playedAudio: PlayedAudioLevels?) {
        detector = VoiceActivityDetector(options: options, playedAudio: playedAudio)
        self.transcriber = transcriber
        self.partials = partials
    }

    /// Feeds one frame; returns the voice activity event and the transcripts it led to.
    public mutating func process(_ frame: AudioFrame) throws(AppMediaError) -> (activity: VoiceActivity?, transcripts: [Transcript]) {
        let event = detector.process(frame)
        var results: [Transcript] = []
        if let session {
            if let partial = try session.feed(frame), partials { results.append(partial) }
        } else {
            recent.append(frame)
            while let first = recent.first, frame.pts > first.pts + Self.preroll { recent.removeFirst() }
        }
        switch event {
        case .started(let at)?:
            let opened = try transcriber.beginUtterance(at: recent.first?.pts ?? at)
            session = opened
            for buffered in recent {
                if let partial = try opened.feed(buffered), partials { results.append(partial) }
            }
            recent = []
        case .stopped(_, let reportedAt)?:
            if let open = session {
                session = nil
                let final = try open.finish(at: reportedAt)
                if !final.text.isEmpty { results.append(final) }
            }
        case nil:
            break
        }
        return (event, results)
    }
}
