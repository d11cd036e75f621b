import ECV
import ECVAgent
import Testing

/// The voice steps of agent scripts: parsing, limits and the branch rule.
@Suite struct AgentScriptVoiceTests {
    @Test func voiceStepsParse() throws {
        let script = try AgentScript("say Hello there, send hi, listen 5s, wait for speech 2s, on \"Transfer me\" transfer Billing, on \"bye\" hangup, otherwise say Sorry")
        #expect(script.steps == [.say("Hello there"), .send("hi"), .listen(within: .seconds(5)), .waitForSpeech(within: .seconds(2)),
                                 .on(words: "transfer me", .transfer(.queue("Billing"))), .on(words: "bye", .hangup(after: nil)),
                                 .otherwise(.say("Sorry"))])
        #expect(script.keywords == ["transfer me", "bye"])
        #expect(script.usesVoice)
        #expect(try !AgentScript("hold 2s, pickup").usesVoice)
        #expect(try AgentScript("listen, wait for speech").steps == [.listen(within: .seconds(10)), .waitForSpeech(within: .seconds(10))])
    }

    @Test func badVoiceStepsAreRefused() {
        for bad in ["on transfer hangup", "on \"x\" on \"y\" hangup", "on \"a;b\" hangup", "on \"\" hangup", "otherwise",
                    "on \"" + String(repeating: "a", count: 80) + "\" hangup", "say " + String(repeating: "a", count: 3000),
                    "on \"hi\" dance", String(repeating: "pickup, ", count: 300) + "pickup"] {
            #expect(throws: AgentScriptError.self, "\(bad.prefix(40))") { try AgentScript(bad) }
        }
    }
}
