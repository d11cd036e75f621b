import ECV
import ECVProtocol
import Foundation

/// Scripted agent actions for bots and demos: `"hold 2s, pickup, flash on, take photo, transfer
/// Billing, hangup after 20s"`. Steps run in order once the call's text channel is open.
///
/// Steps: `wait Ns` · `hold` / `hold Ns` (hold, then wait) · `pickup` · `flash on|off` (waits for the
/// caller's answer) · `take photo` (on, 2 s, off) / `take photo on|off` · `status audio|video
/// muted|unmuted` · `say TEXT` · `transfer QUEUE` / `transfer agent:ID` · `hangup` / `hangup after Ns`.
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
        case say(String)
        case transfer(TransferTarget)
        case hangup(after: Duration?)
        case retry(VerificationCommand.VerificationStep)
        case verdict(result: String, reason: String)
    }

    public let steps: [Step]
    public let text: String

    public init(_ text: String) throws(AgentScriptError) {
        self.text = text
        steps = try text.split(separator: ",").map { part throws(AgentScriptError) in try Self.parse(step: String(part)) }
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
        case "say" where !rest.isEmpty: return .say(rest.joined(separator: " "))
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

    private static func duration(_ text: String, in step: String) throws(AgentScriptError) -> Duration {
        let number = text.hasSuffix("ms") ? text.dropLast(2) : text.hasSuffix("s") ? text.dropLast() : Substring(text)
        guard let value = Double(number), value >= 0 else { throw .invalid(step: step, reason: "'\(text)' is not a duration such as 2s or 500ms") }
        return text.hasSuffix("ms") ? .milliseconds(value) : .seconds(value)
    }

    /// Runs the steps on `call`, reporting each as it starts; stops early if the call ends.
    public func run(on call: AgentCall, report: @Sendable (String) -> Void = { _ in }) async {
        for step in steps {
            guard !call.isEnded else { return }
            do {
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
                    report("say \(text)")
                    try call.send(.raw(text))
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
            } catch {
                report("step failed: \(error)")
            }
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
