import ECV
import ECVProtocol
import Foundation

/// Scripted agent actions for bots and demos: `"hold 2s, pickup, flash on, take photo, transfer
/// Billing, hangup after 20s"`. Steps run in order once the call's text channel is open.
///
/// Steps: `wait Ns` · `hold` / `hold Ns` (hold, then wait) · `pickup` · `flash on|off` (waits for the
/// caller's answer) · `take photo` (on, 2 s, off) / `take photo on|off` · `status audio|video
/// muted|unmuted` · `send TEXT` (a text message) · `transfer QUEUE` / `transfer agent:ID` · `hangup` /
/// `hangup after Ns`.
/// Voice (with an `AgentVoice`, e.g. `ecv agent --voice`): `say TEXT` speaks (without a voice it is
/// sent as text) · `listen` / `listen Ns` (waits for the caller's next utterance, 10 s by default) ·
/// `wait for speech` / `wait for speech Ns` · `on "WORDS" STEP` (runs STEP when the utterance the
/// last `listen` heard contains WORDS) · `otherwise STEP` (after `on` steps: runs when none matched).
/// Identity verification (EnQualify): `ocr retry` / `face retry` / `nfc retry` (waits for the
/// customer's outcome) · `verdict RESULT "reason"` (posts the verdict, e.g. `verdict APPROVED "documents match"`;
/// the reason cannot contain a comma).
public struct AgentScript: Sendable, Equatable, CustomStringConvertible {
    public enum Step: Sendable, Equatable {
        case wait(Duration)
        case hold(then: Duration?)
        case pickup
        case flash(on: Bool)
        case takePhoto(on: Bool?)
        case status(media: DataChannelCommand.MediaKind, muted: Bool)
        /// Speech with a voice, else text.
        case say(String)
        /// A text message.
        case send(String)
        case listen(within: Duration)
        case waitForSpeech(within: Duration)
        indirect case on(words: String, Step)
        indirect case otherwise(Step)
        case transfer(TransferTarget)
        case hangup(after: Duration?)
        case retry(VerificationCommand.VerificationStep)
        case verdict(result: String, reason: String)
    }

    public let steps: [Step]
    public let text: String

    /// A script's limits: characters and steps.
    public static let maximumLength = 8000
    public static let maximumSteps = 200

    public init(_ text: String) throws(AgentScriptError) {
        guard text.count <= Self.maximumLength else { throw .invalid(step: String(text.prefix(40)) + "…", reason: "a script has at most \(Self.maximumLength) characters") }
        self.text = text
        steps = try text.split(separator: ",").map { part throws(AgentScriptError) in try Self.parse(step: String(part)) }
        guard steps.count <= Self.maximumSteps else { throw .invalid(step: "", reason: "a script has at most \(Self.maximumSteps) steps") }
    }

    public var description: String { text }

    private static func parse(step raw: String) throws(AgentScriptError) -> Step {
        let words = raw.split(separator: " ").map(String.init)
        guard let verb = words.first?.lowercased() else { throw .invalid(step: raw, reason: "empty step") }
        let rest = Array(words.dropFirst())
        let lower = rest.map { $0.lowercased() }
        switch verb {
        case "wait" where rest.count == 1: return .wait(try duration(rest[0], in: raw))
        case "hold" where rest.isEmpty: return .hold(then: nil)
        case "hold" where rest.count == 1: return .hold(then: try duration(rest[0], in: raw))
        case "pickup" where rest.isEmpty: return .pickup
        case "flash" where lower == ["on"] || lower == ["off"]: return .flash(on: lower == ["on"])
        case "take" where lower == ["photo"]: return .takePhoto(on: nil)
        case "take" where lower == ["photo", "on"] || lower == ["photo", "off"]: return .takePhoto(on: lower[1] == "on")
        case "status" where lower.count == 2 && ["audio", "video"].contains(lower[0]) && ["muted", "unmuted"].contains(lower[1]):
            return .status(media: lower[0] == "audio" ? .audio : .video, muted: lower[1] == "muted")
        case "say" where !rest.isEmpty: return .say(try spoken(rest.joined(separator: " "), in: raw))
        case "send" where !rest.isEmpty: return .send(rest.joined(separator: " "))
        case "listen" where rest.isEmpty: return .listen(within: defaultListening)
        case "listen" where rest.count == 1: return .listen(within: try duration(rest[0], in: raw))
        case "wait" where lower == ["for", "speech"]: return .waitForSpeech(within: defaultListening)
        case "wait" where lower.count == 3 && lower[0...1] == ["for", "speech"]: return .waitForSpeech(within: try duration(rest[2], in: raw))
        case "on" where rest.count >= 2: return try branch(rest, in: raw)
        case "otherwise" where !rest.isEmpty: return .otherwise(try parse(step: rest.joined(separator: " ")))
        case "transfer" where rest.count == 1:
            let target = rest[0]
            return .transfer(target.lowercased().hasPrefix("agent:") ? .agent(String(target.dropFirst(6))) : .queue(target))
        case "ocr" where lower == ["retry"]: return .retry(.ocr)
        case "face" where lower == ["retry"]: return .retry(.face)
        case "nfc" where lower == ["retry"]: return .retry(.nfc)
        case "verdict" where !rest.isEmpty:
            let result = rest[0].uppercased()
            guard (1...32).contains(result.count), result.allSatisfy({ ("A"..."Z").contains($0) || $0 == "_" }) else {
                throw .invalid(step: raw.trimmingCharacters(in: .whitespaces), reason: "the verdict must be 1-32 of A-Z and _, e.g. APPROVED")
            }
            var reason = rest.dropFirst().joined(separator: " ")
            if reason.count >= 2, reason.hasPrefix("\""), reason.hasSuffix("\"") { reason = String(reason.dropFirst().dropLast()) }
            return .verdict(result: result, reason: reason)
        case "hangup" where rest.isEmpty: return .hangup(after: nil)
        case "hangup" where lower.count == 2 && lower[0] == "after": return .hangup(after: try duration(rest[1], in: raw))
        default: throw .invalid(step: raw.trimmingCharacters(in: .whitespaces), reason: "unknown step")
        }
    }

    /// How long `listen` and `wait for speech` wait when the script does not say.
    static let defaultListening: Duration = .seconds(10)

    private static func spoken(_ text: String, in step: String) throws(AgentScriptError) -> String {
        do { return try SpeechText.validated(text) } catch { throw .invalid(step: step, reason: error.description) }
    }

    /// `on "WORDS" STEP`: WORDS in double quotes (letters, digits, apostrophes, spaces; 1-64
    /// characters), then one step that is not itself a branch.
    private static func branch(_ words: [String], in raw: String) throws(AgentScriptError) -> Step {
        let joined = words.joined(separator: " ")
        guard joined.hasPrefix("\""), let close = joined.dropFirst().firstIndex(of: "\"") else {
            throw .invalid(step: raw.trimmingCharacters(in: .whitespaces), reason: "on takes \"WORDS\" in double quotes, then a step")
        }
        let phrase = String(joined[joined.index(after: joined.startIndex)..<close]).trimmingCharacters(in: .whitespaces)
        guard (1...64).contains(phrase.count), phrase.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "'" || $0 == " " }) else {
            throw .invalid(step: raw.trimmingCharacters(in: .whitespaces), reason: "the words to match are 1-64 letters, digits, apostrophes and spaces")
        }
        let action = try parse(step: String(joined[joined.index(after: close)...]))
        switch action {
        case .on, .otherwise: throw .invalid(step: raw.trimmingCharacters(in: .whitespaces), reason: "a branch runs one plain step")
        default: return .on(words: phrase.lowercased(), action)
        }
    }

    /// The words the script's `on` steps listen for: the phrases a recogniser's grammar needs.
    public var keywords: [String] {
        steps.compactMap { if case .on(let words, _) = $0 { words } else { nil } }
    }

    /// Whether the script speaks or listens (so a bot needs a voice and application audio).
    public var usesVoice: Bool {
        steps.contains { step in
            switch step {
            case .say, .listen, .waitForSpeech, .on: true
            default: false
            }
        }
    }

    private static func duration(_ text: String, in step: String) throws(AgentScriptError) -> Duration {
        let number = text.hasSuffix("ms") ? text.dropLast(2) : text.hasSuffix("s") ? text.dropLast() : Substring(text)
        guard let value = Double(number), value >= 0 else { throw .invalid(step: step, reason: "'\(text)' is not a duration such as 2s or 500ms") }
        return text.hasSuffix("ms") ? .milliseconds(value) : .seconds(value)
    }

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

public enum AgentScriptError: Error, Sendable, Equatable, CustomStringConvertible {
    case invalid(step: String, reason: String)

    public var description: String {
        switch self {
        case .invalid(let step, let reason): "script step '\(step)': \(reason)"
        }
    }
}
