import Foundation

/// What a speech recogniser heard in one utterance, so far (`isFinal` false) or in all.
public struct Transcript: Sendable, Hashable {
    public var text: String
    public var isFinal: Bool
    /// Start and end of the utterance, in nanoseconds on the call's timeline.
    public var start: UInt64
    public var end: UInt64

    public init(text: String, isFinal: Bool, start: UInt64, end: UInt64) {
        self.text = text
        self.isFinal = isFinal
        self.start = start
        self.end = end
    }

    /// Whether `phrase` occurs in the text as whole words, case-insensitively.
    public func contains(words phrase: String) -> Bool {
        let heard = text.lowercased().split(whereSeparator: { !$0.isLetter && !$0.isNumber && $0 != "'" }).map(String.init)
        let wanted = phrase.lowercased().split(whereSeparator: { !$0.isLetter && !$0.isNumber && $0 != "'" }).map(String.init)
        guard !wanted.isEmpty, wanted.count <= heard.count else { return false }
        return (0...(heard.count - wanted.count)).contains { Array(heard[$0..<($0 + wanted.count)]) == wanted }
    }
}

/// Speech to text, behind a protocol so an app can plug Vosk, Whisper or a cloud service in place
/// of the pocketsphinx one in `ECVSpeech`. The SDK cuts the far end's audio into utterances with
/// its voice activity detector and opens one session per utterance.
public protocol Transcriber: Sendable {
    /// The audio the engine takes; the call converts to it.
    var inputFormat: AudioFormat { get }
    /// Starts one utterance, whose first frame is at `start`.
    func beginUtterance(at start: UInt64) throws(AppMediaError) -> any TranscriptionSession
}

/// One utterance being recognised. Used from one task at a time.
public protocol TranscriptionSession: AnyObject, Sendable {
    /// Feeds audio; returns a partial result when the engine has a new one.
    func feed(_ frame: AudioFrame) throws(AppMediaError) -> Transcript?
    /// Ends the utterance at `end` and returns the final result.
    func finish(at end: UInt64) throws(AppMediaError) -> Transcript
}

/// Text to speech, behind a protocol so an app can plug its own voice. `ECVSpeech` has one on espeak-ng.
public protocol SpeechSynthesizer: Sendable {
    /// The spoken text as PCM (any format a call takes; the call converts it).
    func synthesize(_ text: String) async throws(AppMediaError) -> AudioClip
}

/// Limits on text handed to a synthesizer: a bot's script or a model's reply is outside input.
public enum SpeechText {
    /// The longest text spoken at once (about three minutes of speech).
    public static let maximumCharacters = 2000

    /// Trims `text` and refuses an empty or oversized one, or one with control characters.
    public static func validated(_ text: String) throws(AppMediaError) -> String {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty else { throw .speech("nothing to say (empty text)") }
        guard trimmed.count <= maximumCharacters else { throw .speech("text of \(trimmed.count) characters; at most \(maximumCharacters) are spoken at once") }
        guard !trimmed.unicodeScalars.contains(where: { $0.properties.generalCategory == .control && $0 != "\n" && $0 != "\t" }) else {
            throw .speech("text contains control characters")
        }
        return trimmed
    }
}
