import Foundation

/// The identity-verification (EnQualify) commands on a call's text channel, between the
/// verification agent and the customer (docs/protocol.md §4.1). The flash requests are the
/// existing `FLASH_ON`/`FLASH_OFF` commands (`DataChannelCommand`); these are the rest.
///
/// Rules, the same as `DataChannelCommand`'s: the message is trimmed, split on `|`, each field
/// trimmed; the keyword and enumerated values match ASCII case-insensitively; fields beyond the
/// ones a command defines are ignored, except a retry outcome's detail, which is the rest of the
/// message on one line (CR and LF become spaces; at most `maxDetailLength` characters, longer is
/// cut; an empty one is none). Text that is none of these is
/// not a verification command (`init(parsing:)` returns nil), and a known keyword with an
/// unknown value is not one either.
public enum VerificationCommand: Sendable, Hashable, CustomStringConvertible {
    /// Agent → customer: please repeat this step (`OCR_RETRY`, `FACE_RETRY`, `NFC_RETRY`).
    case retryRequest(VerificationStep)
    /// Customer → agent: what became of a retry (`OCR_RETRY|STARTED`, `OCR_RETRY|SUCCEEDED|detail`, …).
    case retryOutcome(VerificationStep, RetryOutcome, detail: String?)
    /// Agent → customer: the verdict is posted at the back office; fetch it (`CALL_RESULT`).
    case callResultReady

    /// The steps an agent can ask to repeat.
    public enum VerificationStep: String, Sendable, Hashable, CaseIterable {
        case ocr = "OCR_RETRY"
        case face = "FACE_RETRY"
        case nfc = "NFC_RETRY"
    }

    /// What the customer's side reports about a retry.
    public enum RetryOutcome: String, Sendable, Hashable, CaseIterable {
        /// The app started the step again (`ocrRetry()` / `faceRetry()`).
        case started = "STARTED"
        /// The repeated step passed.
        case succeeded = "SUCCEEDED"
        /// The repeated step failed.
        case failed = "FAILED"
        /// The customer's SDK refused: the back office's retry limit for this step is reached.
        case limitReached = "LIMIT_REACHED"
    }

    public static let callResultKeyword = "CALL_RESULT"
    /// The longest detail carried after a retry outcome.
    public static let maxDetailLength = 256

    public init?(parsing message: String) {
        let fields = message.trimmingCharacters(in: .whitespacesAndNewlines).unicodeScalars
            .split(separator: "|", maxSplits: 2, omittingEmptySubsequences: false)
            .map { String(String.UnicodeScalarView($0)).trimmingCharacters(in: .whitespacesAndNewlines) }
        guard let keyword = fields.first.map(Self.asciiUppercased) else { return nil }
        if keyword == Self.callResultKeyword {
            self = .callResultReady
            return
        }
        guard let step = VerificationStep(rawValue: keyword) else { return nil }
        guard fields.count > 1 else {
            self = .retryRequest(step)
            return
        }
        guard let outcome = RetryOutcome(rawValue: Self.asciiUppercased(fields[1])) else { return nil }
        self = .retryOutcome(step, outcome, detail: fields.count > 2 ? Self.normalizedDetail(fields[2]) : nil)
    }

    /// A detail as carried: one line, trimmed, at most `maxDetailLength` characters; nil when empty.
    static func normalizedDetail(_ text: String) -> String? {
        let oneLine = String(String.UnicodeScalarView(text.unicodeScalars.map { $0 == "\n" || $0 == "\r" ? " " : $0 }))
        let cut = String(oneLine.trimmingCharacters(in: .whitespacesAndNewlines).prefix(maxDetailLength))
            .trimmingCharacters(in: .whitespacesAndNewlines)
        return cut.isEmpty ? nil : cut
    }

    /// ASCII letters upper-cased only (a non-ASCII letter never folds into a keyword).
    private static func asciiUppercased(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.map { scalar in
            ("a"..."z").contains(scalar) ? Unicode.Scalar(scalar.value - 32)! : scalar
        }))
    }

    /// The text to send; a detail is normalized as the parser does (one line, trimmed, cut).
    public var text: String {
        switch self {
        case .retryRequest(let step): return step.rawValue
        case .retryOutcome(let step, let outcome, let detail):
            let base = step.rawValue + "|" + outcome.rawValue
            guard let detail = detail.flatMap(Self.normalizedDetail) else { return base }
            return base + "|" + detail
        case .callResultReady: return Self.callResultKeyword
        }
    }

    public var description: String {
        switch self {
        case .retryRequest(let step): ".retryRequest(.\(step))"
        case .retryOutcome(let step, let outcome, let detail):
            ".retryOutcome(.\(step), .\(outcome), detail: \(detail.map { $0.debugDescription } ?? "nil"))"
        case .callResultReady: ".callResultReady"
        }
    }
}
