import ECVAgent
import ECVSpeech

// README.md, "Bots that talk": the voice bot example, built from the ECVAgent and ECVSpeech
// products alone. `call` is the AgentCall the bot's events hand over, here a parameter.

func readmeBotsThatTalkExample(call: AgentCall) async throws {
    let voice = try ESpeakSynthesizer()
    let ears = try PocketSphinxTranscriber(vocabulary: .phrases(["billing", "goodbye", "hello"]))
    try await call.setBargeIn(.standard)                          // the caller talking stops the bot
    try await call.say("Hello. Say billing or goodbye.", with: voice)
    for await heard in try await call.listen(with: ears) {
        guard case .transcript(let said) = heard, said.isFinal else { continue }
        if said.contains(words: "billing") { try await call.transfer(to: .queue("Billing")) }
    }
}
