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
                    "on \"hi\" dance", String(repeating: "pickup, ", count: 300) + "pickup",
                    // found by the agent-script fuzz target: a duration that is no number of
                    // milliseconds, a branch under `otherwise`, a limit counted in characters
                    "wait inf", "hold 1e300s", "listen 86401s", "otherwise on \"x\" hold", "otherwise otherwise hold",
                    "send " + String(repeating: "é", count: 4500)] {
            #expect(throws: AgentScriptError.self, "\(bad.prefix(40))") { try AgentScript(bad) }
        }
    }

    @Test func stepsPrintAsTextThatParsesBackToThem() throws {
        let script = try AgentScript("hold 1.5s, pickup, flash off, take photo, take photo on, status video muted, say Hello  there, send hi, "
                                     + "listen, wait for speech 250ms, on \"TRANSFER me\" transfer agent:A-2, otherwise transfer Billing, "
                                     + "ocr retry, verdict approved documents match, hangup after 0.0004s, wait 2")
        let printed = script.steps.map(\.description)
        #expect(printed == ["hold 1500ms", "pickup", "flash off", "take photo", "take photo on", "status video muted", "say Hello there",
                            "send hi", "listen 10000ms", "wait for speech 250ms", "on \"transfer me\" transfer agent:A-2",
                            "otherwise transfer Billing", "ocr retry", "verdict APPROVED \"documents match\"", "hangup after 0ms", "wait 2000ms"])
        #expect(try AgentScript(printed.joined(separator: ", ")).steps == script.steps)
    }
}
