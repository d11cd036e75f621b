import ECV
import ECVProtocol
import Foundation

extension AgentScript {
    /// Runs the steps on `call`, reporting each as it starts; stops early if the call ends.
    /// With `voice`, `say` speaks and the listening steps hear the caller.
    public func run(on call: AgentCall, voice: AgentVoice? = nil, report: @escaping @Sendable (String) -> Void = { _ in }) async {
        let ears = await voice?.listen(on: call, report: report)
        defer { ears?.stop() }
        var branch = BranchState.none
        for step in steps {
            guard !call.isEnded else { return }
            do {
                guard let plain = branch.admit(step, heard: ears?.lastHeard) else { continue }
                try await run(plain, on: call, voice: voice, ears: ears, report: report)
            } catch {
                report("step failed: \(error)")
            }
        }
    }

    private func run(_ step: Step, on call: AgentCall, voice: AgentVoice?, ears: AgentEars?, report: @escaping @Sendable (String) -> Void) async throws {
                switch step {
                case .wait(let time):
                    try await Task.sleep(for: time)
                case .hold(let then):
                    report("hold")
                    try call.hold()
                    if let then { try await Task.sleep(for: then) }
                case .pickup:
                    report("pickup")
                    try call.pickup()
                case .flash(let on):
                    report("flash \(on ? "on" : "off") requested")
                    let answer = try await call.requestFlash(on)
                    report("flash \(on ? "on" : "off"): caller answered \(answer)")
                case .takePhoto(let on):
                    if let on {
                        report("take photo \(on ? "on" : "off")")
                        try call.takePhoto(on)
                    } else {
                        report("take photo")
                        try call.takePhoto(true)
                        try await Task.sleep(for: .seconds(2))
                        try call.takePhoto(false)
                    }
                case .status(let media, let muted):
                    report("status \(media.rawValue) \(muted ? "muted" : "unmuted")")
                    try call.sendStatus(media: media, muted: muted)
                case .say(let text):
                    if let voice {
                        report("say \(text)")
                        let outcome = await (try await call.say(text, with: voice.synthesizer)).finished()
                        if outcome != .completed { report("say: \(outcome)") }
                    } else {
                        report("send \(text) (no voice)")
                        try call.send(.raw(text))
                    }
                case .send(let text):
                    report("send \(text)")
                    try call.send(.raw(text))
                case .listen(let within):
                    guard let ears else { throw AgentScriptError.invalid(step: "listen", reason: "the bot has no voice (ecv agent --voice)") }
                    report("listen")
                    let heard = await ears.nextUtterance(within: within)
                    report(heard.map { "heard \"\($0.text)\"" } ?? "heard nothing")
                case .waitForSpeech(let within):
                    guard let ears else { throw AgentScriptError.invalid(step: "wait for speech", reason: "the bot has no voice (ecv agent --voice)") }
                    report("wait for speech")
                    report(await ears.speechStarted(within: within) ? "speech started" : "no speech")
                case .on, .otherwise:
                    break
                case .transfer(let target):
                    report("transfer to \(target.description)")
                    try await call.transfer(to: target)
                case .retry(let step):
                    report("\(step.rawValue) requested")
                    let answer = try await call.requestRetry(step)
                    report("\(step.rawValue): customer answered \(answer)")
                case .verdict(let result, let reason):
                    report("verdict \(result) \"\(reason)\"")
                    try await call.postVerdict(result: result, description: reason)
                case .hangup(let after):
                    if let after { try await Task.sleep(for: after) }
                    report("hangup")
                    await call.hangup()
                }
    }
}

/// Which steps of a run of `on`/`otherwise` steps run: every `on` whose words were heard (so
/// `on "billing" say One moment, on "billing" transfer Billing` does both), and every `otherwise` when none was.
enum BranchState {
    case none
    case matched
    case open

    /// The step to run now (a branch's action, or a plain step), or nil to skip it.
    mutating func admit(_ step: AgentScript.Step, heard: Transcript?) -> AgentScript.Step? {
        switch step {
        case .on(let words, let action):
            if heard?.contains(words: words) == true { self = .matched; return action }
            if self != .matched { self = .open }
            return nil
        case .otherwise(let action):
            return self == .open ? action : nil
        default:
            self = .none
            return step
        }
    }
}
