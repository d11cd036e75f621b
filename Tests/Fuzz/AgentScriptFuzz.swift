// libFuzzer target: AgentScript's parser (Sources/ECVAgent/AgentScript.swift) on arbitrary text.
// Whatever the text: no crash; a script that parses holds at most maximumLength bytes and
// maximumSteps steps, its durations are at most a day, every branch runs a plain step, and each
// step prints (Step.description) to text that parses back to the same step; the printed script,
// when it fits the limit, parses back to the same steps. A refusal names the step and a reason.
import Foundation
import MediaPipeline

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzAgentScript(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    let script: AgentScript
    do {
        script = try AgentScript(text)
    } catch {
        if case .invalid(_, let reason) = error, reason.isEmpty { fatalError("a refusal without a reason") }
        return 0
    }
    if text.utf8.count > AgentScript.maximumLength { fatalError("a script of \(text.utf8.count) bytes accepted") }
    if script.steps.count > AgentScript.maximumSteps { fatalError("\(script.steps.count) steps accepted") }
    for step in script.steps {
        check(step)
        switch step {
        case .on(_, let action), .otherwise(let action):
            if case .on = action { fatalError("a branch runs a branch: \(step)") }
            if case .otherwise = action { fatalError("a branch runs a branch: \(step)") }
            check(action)
        default: break
        }
        let printed = step.description
        guard let again = try? AgentScript(printed) else { fatalError("the step \(step) prints as '\(printed)', which does not parse") }
        if again.steps != [step] { fatalError("'\(printed)' parses to \(again.steps), not \(step)") }
    }
    let printed = script.steps.map(\.description).joined(separator: ", ")
    if printed.utf8.count <= AgentScript.maximumLength {
        guard let again = try? AgentScript(printed) else { fatalError("the script prints as '\(printed)', which does not parse") }
        if again.steps != script.steps { fatalError("the printed script parses to other steps") }
    }
    return 0
}

/// A step's own bounds: durations within a day, spoken text and match words within theirs.
private func check(_ step: AgentScript.Step) {
    var durations: [Duration] = []
    switch step {
    case .wait(let time), .listen(let time), .waitForSpeech(let time): durations = [time]
    case .hold(let then?), .hangup(let then?): durations = [then]
    case .say(let text):
        if text.isEmpty || text.count > SpeechText.maximumCharacters { fatalError("spoken text of \(text.count) characters") }
    case .on(let words, _):
        if !(1...64).contains(words.count) || words != words.lowercased() { fatalError("match words '\(words)'") }
    default: break
    }
    for duration in durations where duration < .zero || duration > AgentScript.maximumDuration { fatalError("a duration of \(duration)") }
}
