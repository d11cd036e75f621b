import ECVProtocol
import Foundation
import MediaPipeline

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

    /// A script's limits: bytes (UTF-8) and steps.
    public static let maximumLength = 8000
    public static let maximumSteps = 200
    /// The longest wait a step may name (a day).
    public static let maximumDuration: Duration = .seconds(86_400)

    public init(_ text: String) throws(AgentScriptError) {
        guard text.utf8.count <= Self.maximumLength else {
            throw .invalid(step: String(text.prefix(40)) + "…", reason: "a script has at most \(Self.maximumLength) bytes")
        }
        self.text = text
        // Split on the scalars, not the characters: a comma or space followed by a combining mark
        // is one character, and would hide the separator in some texts and not in others.
        steps = try text.unicodeScalars.split(separator: ",").map { part throws(AgentScriptError) in
            try Self.parse(step: String(String.UnicodeScalarView(part)))
        }
        guard steps.count <= Self.maximumSteps else { throw .invalid(step: "", reason: "a script has at most \(Self.maximumSteps) steps") }
    }

    public var description: String { text }

    private static func parse(step raw: String) throws(AgentScriptError) -> Step {
        let words = raw.unicodeScalars.split(separator: " ").map { String(String.UnicodeScalarView($0)) }
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
        case "otherwise" where !rest.isEmpty: return .otherwise(try plainAction(rest.joined(separator: " "), in: raw))
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
            var reason = rest.dropFirst().joined(separator: " ").unicodeScalars[...]
            if reason.count >= 2, reason.first == "\"", reason.last == "\"" { reason = reason.dropFirst().dropLast() }
            return .verdict(result: result, reason: String(String.UnicodeScalarView(reason)))
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
        let joined = words.joined(separator: " ").unicodeScalars
        guard joined.first == "\"", let close = joined.dropFirst().firstIndex(of: "\"") else {
            throw .invalid(step: raw.trimmingCharacters(in: .whitespaces), reason: "on takes \"WORDS\" in double quotes, then a step")
        }
        // Checked once lowercased: lowercasing can turn a letter into a letter and a mark (İ).
        let quoted = String(String.UnicodeScalarView(joined[joined.index(after: joined.startIndex)..<close]))
        let phrase = quoted.trimmingCharacters(in: .whitespaces).lowercased()
        guard (1...64).contains(phrase.count), phrase.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "'" || $0 == " " }) else {
            throw .invalid(step: raw.trimmingCharacters(in: .whitespaces), reason: "the words to match are 1-64 letters, digits, apostrophes and spaces")
        }
        return .on(words: phrase, try plainAction(String(String.UnicodeScalarView(joined[joined.index(after: close)...])), in: raw))
    }

    /// The step an `on` or `otherwise` runs: one that is not itself a branch.
    private static func plainAction(_ text: String, in raw: String) throws(AgentScriptError) -> Step {
        let action = try parse(step: text)
        switch action {
        case .on, .otherwise: throw .invalid(step: raw.trimmingCharacters(in: .whitespaces), reason: "a branch runs one plain step")
        default: return action
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

    /// `2s`, `1.5s`, `500ms` (or a bare number of seconds), to the millisecond, at most a day.
    private static func duration(_ text: String, in step: String) throws(AgentScriptError) -> Duration {
        let number = text.hasSuffix("ms") ? text.dropLast(2) : text.hasSuffix("s") ? text.dropLast() : Substring(text)
        guard let value = Double(number), value >= 0 else { throw .invalid(step: step, reason: "'\(text)' is not a duration such as 2s or 500ms") }
        let milliseconds = (text.hasSuffix("ms") ? value : value * 1000).rounded()
        let longest = Double(maximumDuration.components.seconds * 1000)
        guard milliseconds <= longest else { throw .invalid(step: step, reason: "'\(text)' is longer than a day") }
        return .milliseconds(Int64(milliseconds))
    }
}

extension AgentScript.Step: CustomStringConvertible {
    /// The step as script text, which parses back to this step (durations in milliseconds, a
    /// verdict's reason in quotes): what a bot reports it runs, and what a script is checked against.
    public var description: String {
        switch self {
        case .wait(let time): "wait \(Self.text(time))"
        case .hold(let then): then.map { "hold \(Self.text($0))" } ?? "hold"
        case .pickup: "pickup"
        case .flash(let on): "flash \(on ? "on" : "off")"
        case .takePhoto(let on): on.map { "take photo \($0 ? "on" : "off")" } ?? "take photo"
        case .status(let media, let muted): "status \(media == .audio ? "audio" : "video") \(muted ? "muted" : "unmuted")"
        case .say(let text): "say \(text)"
        case .send(let text): "send \(text)"
        case .listen(let within): "listen \(Self.text(within))"
        case .waitForSpeech(let within): "wait for speech \(Self.text(within))"
        case .on(let words, let action): "on \"\(words)\" \(action)"
        case .otherwise(let action): "otherwise \(action)"
        case .transfer(.queue(let queue)): "transfer \(queue)"
        case .transfer(.agent(let agent)): "transfer agent:\(agent)"
        case .hangup(let after): after.map { "hangup after \(Self.text($0))" } ?? "hangup"
        case .retry(.ocr): "ocr retry"
        case .retry(.face): "face retry"
        case .retry(.nfc): "nfc retry"
        case .verdict(let result, let reason): "verdict \(result) \"\(reason)\""
        }
    }

    private static func text(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        return "\(seconds * 1000 + attoseconds / 1_000_000_000_000_000)ms"
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
