import Foundation
import MediaPipeline
import Synchronization

/// Speech to text with pocketsphinx and Debian's US English model (`pocketsphinx-en-us`), on
/// the CPU, offline. Two vocabularies: the model's full language model (open dictation, about
/// as accurate as a 2015 engine: fine for keywords, weak for sentences), or a fixed list of
/// phrases as a grammar (what a bot menu needs, and deterministic). For better recognition plug
/// another `Transcriber` (Vosk, Whisper, a cloud service).
///
/// One decoder per transcriber, one utterance at a time (a second `beginUtterance` while one is
/// open throws); make one transcriber per call.
public final class PocketSphinxTranscriber: Transcriber, @unchecked Sendable {
    // @unchecked Sendable: `decoder` is used only inside `lock` (pocketsphinx is not thread-safe);
    // `busy` says an utterance is open, so sessions never interleave.
    private let decoder: PocketSphinxDecoder
    private let lock = Mutex(false)

    /// Where Debian's model lives.
    public struct Model: Sendable, Hashable {
        public var acousticModel: String
        public var dictionary: String
        public var languageModel: String
        public init(acousticModel: String, dictionary: String, languageModel: String) {
            self.acousticModel = acousticModel
            self.dictionary = dictionary
            self.languageModel = languageModel
        }
        /// `pocketsphinx-en-us`.
        public static let debianEnglish = Model(acousticModel: "/usr/share/pocketsphinx/model/en-us/en-us",
                                                dictionary: "/usr/share/pocketsphinx/model/en-us/cmudict-en-us.dict",
                                                languageModel: "/usr/share/pocketsphinx/model/en-us/en-us.lm.bin")
        /// Whether its files are installed.
        public var isInstalled: Bool {
            [acousticModel, dictionary, languageModel].allSatisfy { FileManager.default.fileExists(atPath: $0) }
        }
    }

    /// What can be heard.
    public enum Vocabulary: Sendable, Hashable {
        /// Open dictation with the model's language model.
        case dictation
        /// Any sequence of these phrases (lowercase words from the dictionary), as a grammar.
        case phrases([String])
    }

    /// At most this many phrases, each of at most `maximumPhraseWords` words.
    public static let maximumPhrases = 200
    public static let maximumPhraseWords = 12

    public let inputFormat = AudioFormat.speech
    public let vocabulary: Vocabulary

    public init(vocabulary: Vocabulary = .dictation, model: Model = .debianEnglish) throws(AppMediaError) {
        guard model.isInstalled else {
            throw .speech("the pocketsphinx model is not installed at \(model.acousticModel) (Debian package pocketsphinx-en-us; `make deps`)")
        }
        self.vocabulary = vocabulary
        switch vocabulary {
        case .dictation:
            decoder = try PocketSphinxDecoder(acousticModel: model.acousticModel, dictionary: model.dictionary, languageModel: model.languageModel)
        case .phrases(let phrases):
            let cleaned = try Self.validated(phrases)
            decoder = try PocketSphinxDecoder(acousticModel: model.acousticModel, dictionary: model.dictionary, languageModel: nil)
            let unknown = Set(cleaned.flatMap { $0.split(separator: " ").map(String.init) }).filter { !decoder.knows($0) }
            guard unknown.isEmpty else { throw .speech("words not in the dictionary: \(unknown.sorted().joined(separator: ", "))") }
            try decoder.useGrammar(Self.grammar(cleaned))
        }
    }

    /// Lowercased, single-spaced phrases of letters and apostrophes, within the limits.
    static func validated(_ phrases: [String]) throws(AppMediaError) -> [String] {
        guard !phrases.isEmpty, phrases.count <= maximumPhrases else {
            throw .speech("\(phrases.count) phrases; give 1…\(maximumPhrases)")
        }
        var cleaned: [String] = []
        for phrase in phrases {
            let words = phrase.lowercased().split(whereSeparator: \.isWhitespace)
            guard !words.isEmpty, words.count <= maximumPhraseWords else {
                throw .speech("phrase \"\(phrase)\" has \(words.count) words; use 1…\(maximumPhraseWords)")
            }
            guard words.allSatisfy({ $0.allSatisfy { ($0.isASCII && $0.isLetter) || $0 == "'" } }) else {
                throw .speech("phrase \"\(phrase)\": use letters and apostrophes only")
            }
            cleaned.append(words.joined(separator: " "))
        }
        return Array(Set(cleaned)).sorted()
    }

    /// A JSGF grammar: any sequence of the phrases.
    static func grammar(_ phrases: [String]) -> String {
        "#JSGF V1.0;\ngrammar ecv;\npublic <utterance> = <phrase>+;\n<phrase> = " + phrases.joined(separator: " | ") + ";\n"
    }

    public func beginUtterance(at start: UInt64) throws(AppMediaError) -> any TranscriptionSession {
        let opened = lock.withLock { busy -> Bool in
            guard !busy else { return false }
            busy = true
            return true
        }
        guard opened else { throw .speech("an utterance is already being recognised by this transcriber") }
        do throws(AppMediaError) {
            try decoder.startUtterance()
        } catch {
            lock.withLock { $0 = false }
            throw error
        }
        return Session(owner: self, start: start)
    }

    /// Recognises a whole clip as one utterance (a test, a file, a voicemail).
    public func transcribe(_ clip: AudioClip) throws(AppMediaError) -> Transcript {
        guard clip.format.sampleRate == 16000, clip.format.channels == 1, clip.format.sampleFormat == .s16 else {
            throw .invalidFormat("pocketsphinx takes 16 kHz mono s16, not \(clip.format)")
        }
        let session = try beginUtterance(at: 0)
        for frame in clip.frames() { _ = try session.feed(frame) }
        return try session.finish(at: UInt64(clip.duration.components.seconds) * 1_000_000_000 + UInt64(clip.duration.components.attoseconds / 1_000_000_000))
    }

    fileprivate func feed(_ samples: [Int16]) throws(AppMediaError) -> String {
        // Called only by the open session, which `busy` makes the only user.
        try decoder.process(samples)
        return decoder.hypothesis
    }

    fileprivate func finish() throws(AppMediaError) -> String {
        defer { lock.withLock { $0 = false } }
        try decoder.endUtterance()
        return decoder.hypothesis
    }

    /// One utterance; used from one task at a time (the listener's).
    private final class Session: TranscriptionSession, @unchecked Sendable {
        // @unchecked Sendable: `state` is behind a Mutex; the owner's decoder is reached only
        // while this session holds the owner's `busy` flag.
        private let owner: PocketSphinxTranscriber
        private let state: Mutex<(start: UInt64, last: String, open: Bool)>

        init(owner: PocketSphinxTranscriber, start: UInt64) {
            self.owner = owner
            state = Mutex((start, "", true))
        }

        func feed(_ frame: AudioFrame) throws(AppMediaError) -> Transcript? {
            guard frame.format.sampleRate == 16000, frame.format.channels == 1 else {
                throw .invalidFormat("pocketsphinx takes 16 kHz mono, not \(frame.format)")
            }
            let (start, open) = state.withLock { ($0.start, $0.open) }
            guard open else { throw .speech("the utterance was finished") }
            let text = try owner.feed(frame.int16Samples)
            let changed = state.withLock { state -> Bool in
                defer { state.last = text }
                return state.last != text && !text.isEmpty
            }
            return changed ? Transcript(text: text, isFinal: false, start: start, end: frame.pts + frame.duration) : nil
        }

        func finish(at end: UInt64) throws(AppMediaError) -> Transcript {
            let (start, open) = state.withLock { state in defer { state.open = false }; return (state.start, state.open) }
            guard open else { throw .speech("the utterance was already finished") }
            return Transcript(text: try owner.finish(), isFinal: true, start: start, end: end)
        }

        deinit {
            // A session dropped unfinished frees its transcriber for the next utterance.
            if state.withLock({ $0.open }) { _ = try? owner.finish() }
        }
    }
}
