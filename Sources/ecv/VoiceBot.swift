import ECV
import ECVAgent
import ECVSpeech

/// The voice of `ecv agent --voice` and `ecv demo --bot`: espeak-ng speaks, pocketsphinx listens
/// for the script's `on "…"` words (a phrase grammar, so what it hears is one of them).
enum VoiceBot {
    /// The script `--voice` runs when none is given: greet, listen, act on what was heard.
    static let defaultScript = "say Hello and thank you for calling. Say billing to reach billing or goodbye to end the call, "
        + "listen, on \"billing\" say Please hold while I transfer you to billing, on \"billing\" transfer Billing, "
        + "on \"hold\" hold 3s, on \"hold\" pickup, on \"goodbye\" say Goodbye, on \"goodbye\" hangup, "
        + "otherwise say Sorry I did not understand. Goodbye, otherwise hangup"

    /// Words the grammar always knows besides the script's, so other speech lands on them
    /// instead of being forced onto a keyword.
    static let fillerPhrases = ["hello", "yes", "no", "please", "thank you", "i", "want", "to", "the", "me", "a", "help"]

    static func voice(for script: AgentScript) throws(CLIError) -> AgentVoice {
        do throws(AppMediaError) {
            let transcriber = try PocketSphinxTranscriber(vocabulary: .phrases(script.keywords + fillerPhrases))
            return AgentVoice(synthesizer: try ESpeakSynthesizer(), transcriber: transcriber)
        } catch {
            throw .failed("voice: \(error)")
        }
    }
}
