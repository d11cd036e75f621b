// libFuzzer target `datachannel`: the text commands on the call's data channel (HOLD, PICKUP,
// FLASH_*, TAKE_PHOTO_*, STATUS, and the verification commands OCR_RETRY, FACE_RETRY,
// NFC_RETRY, CALL_RESULT of docs/protocol.md §4.1), which the caller SDK and the agent bot parse
// from the other side. Parsing never fails; the properties are the documented rules (docs/protocol.md §4):
// the canonical `text` of what was parsed parses back to the same command, keywords and
// enumerated values match ASCII case-insensitively (nothing else folds into them), and an rtcId
// is kept verbatim (trimmed, never empty).
import ECVProtocol
import Foundation

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzDataChannel(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    checkVerificationCommand(text)
    let command = DataChannelCommand(parsing: text)
    let again = DataChannelCommand(parsing: command.text)
    guard again == command else { fatalError("\(command) → \(command.text.debugDescription) → \(again)") }
    guard again.text == command.text else { fatalError("canonical text not stable for \(command)") }
    _ = command.description
    if case .raw(let message) = command {
        guard message == text else { fatalError("raw text changed") }
        return 0
    }
    // The fields as received: the message trimmed, split on '|', each field trimmed.
    let fields = text.trimmingCharacters(in: .whitespacesAndNewlines)
        .unicodeScalars.split(separator: "|", omittingEmptySubsequences: false)
        .map { String(String.UnicodeScalarView($0)).trimmingCharacters(in: .whitespacesAndNewlines) }
    // Split on the `|` scalar, as the parser does (a combining mark after it joins its grapheme).
    let canonical = command.text.unicodeScalars.split(separator: "|", omittingEmptySubsequences: false)
        .map { String(String.UnicodeScalarView($0)) }
    let rtcId: String?
    switch command {
    case .hold(let id), .pickup(let id), .status(_, _, let id): rtcId = id
    default: rtcId = nil
    }
    let enumerated = canonical.count - (rtcId == nil ? 0 : 1)
    for index in 0..<enumerated where asciiUppercased(fields[index]) != canonical[index] {
        fatalError("\(fields[index].debugDescription) was read as \(canonical[index])")
    }
    if let rtcId {
        guard !rtcId.isEmpty, fields[enumerated] == rtcId else { fatalError("rtcId \(rtcId.debugDescription) is not the field as sent") }
    }
    return 0
}

private func asciiUppercased(_ text: String) -> String {
    String(String.UnicodeScalarView(text.unicodeScalars.map { ("a"..."z").contains($0) ? Unicode.Scalar($0.value - 32)! : $0 }))
}

/// The verification commands: what parses has a canonical text that parses back to it (stable),
/// a detail is one line of at most 256 characters, never empty, and the keyword and outcome are
/// the fields as sent, ASCII case-insensitively; a verification text is never a known
/// `DataChannelCommand` (the SDK hands it on as a `TextChannelMessage`).
private func checkVerificationCommand(_ text: String) {
    guard let command = VerificationCommand(parsing: text) else { return }
    let again = VerificationCommand(parsing: command.text)
    guard again == command else { fatalError("\(command) → \(command.text.debugDescription) → \(String(describing: again))") }
    guard again?.text == command.text else { fatalError("canonical text not stable for \(command)") }
    _ = command.description
    guard case .raw = DataChannelCommand(parsing: text) else { fatalError("\(text.debugDescription) is both kinds of command") }
    let fields = text.trimmingCharacters(in: .whitespacesAndNewlines)
        .unicodeScalars.split(separator: "|", maxSplits: 2, omittingEmptySubsequences: false)
        .map { String(String.UnicodeScalarView($0)).trimmingCharacters(in: .whitespacesAndNewlines) }
    let canonical = command.text.unicodeScalars.split(separator: "|", maxSplits: 2, omittingEmptySubsequences: false)
        .map { String(String.UnicodeScalarView($0)) }
    switch command {
    case .callResultReady, .retryRequest:
        guard asciiUppercased(fields[0]) == canonical[0] else { fatalError("\(fields[0].debugDescription) was read as \(canonical[0])") }
    case .retryOutcome(_, _, let detail):
        for index in 0..<2 where asciiUppercased(fields[index]) != canonical[index] {
            fatalError("\(fields[index].debugDescription) was read as \(canonical[index])")
        }
        if let detail {
            guard !detail.isEmpty, detail.count <= VerificationCommand.maxDetailLength,
                  !detail.unicodeScalars.contains(where: { $0 == "\n" || $0 == "\r" }) else { fatalError("detail \(detail.debugDescription)") }
        }
    }
}
