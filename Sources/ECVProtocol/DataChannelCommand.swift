import Foundation

/// A text message on the call's text data channel between the caller SDK and the agent
/// (docs/protocol.md §4). Parsing never fails: what is not a known command is `.raw`.
///
/// Rules: the whole message is trimmed of surrounding whitespace, split on `|`, and each field is
/// trimmed; the first field (the keyword) and enumerated values (`AUDIO`, `MUTED`, `ACCEPTED`, …)
/// match ASCII case-insensitively; an rtcId is kept verbatim and an empty one counts as absent;
/// fields beyond the ones a command defines are ignored. `text` is the canonical upper-case form.
public enum DataChannelCommand: Sendable, Hashable, CustomStringConvertible {
    /// Agent → caller: the call is on hold (`StartHold`).
    case hold(rtcId: String?)
    /// Agent → caller: the call is resumed (`EndHold`).
    case pickup(rtcId: String?)
    /// Agent → caller: please turn the torch on; needs the user's approval, answered by `flashReply`.
    case flashOn
    /// Agent → caller: please turn the torch off; answered by `flashReply`.
    case flashOff
    /// Caller → agent: the outcome of a flash request.
    case flashReply(request: FlashRequest, approval: FlashApproval)
    /// Agent → caller: the agent starts/stops taking a photo (`TakePhotoOn` / `TakePhotoOff`).
    case takePhotoOn
    case takePhotoOff
    /// Either side → the other: the sender muted or unmuted its own audio or video.
    case status(media: MediaKind, muted: Bool, rtcId: String?)
    /// Anything else, exactly as received (`TextChannelMessage`).
    case raw(String)

    public enum FlashRequest: String, Sendable, Hashable, CaseIterable {
        case on = "FLASH_ON"
        case off = "FLASH_OFF"
    }

    public enum FlashApproval: String, Sendable, Hashable, CaseIterable {
        /// The user approved and the torch was switched.
        case accepted = "ACCEPTED"
        /// The user declined.
        case refused = "REFUSED"
        /// The device has no torch (every headless Linux caller), so nothing was asked.
        case unavailable = "UNAVAILABLE"
    }

    public enum MediaKind: String, Sendable, Hashable, CaseIterable {
        case audio = "AUDIO"
        case video = "VIDEO"
    }

    public init(parsing message: String) {
        // Split on the `|` scalar, not the Character: a combining mark right after it makes one
        // grapheme of the two, which Character splitting would not see as a separator.
        let fields = message.trimmingCharacters(in: .whitespacesAndNewlines).unicodeScalars
            .split(separator: "|", omittingEmptySubsequences: false)
            .map { String(String.UnicodeScalarView($0)).trimmingCharacters(in: .whitespacesAndNewlines) }
        func field(_ index: Int) -> String? { index < fields.count ? fields[index] : nil }
        func rtcId(at index: Int) -> String? {
            guard let value = field(index), !value.isEmpty else { return nil }
            return value
        }
        func upper(_ index: Int) -> String? { field(index).map(Self.asciiUppercased) }

        switch upper(0) {
        case "HOLD": self = .hold(rtcId: rtcId(at: 1))
        case "PICKUP": self = .pickup(rtcId: rtcId(at: 1))
        case "FLASH_ON", "FLASH_OFF":
            let request: FlashRequest = upper(0) == "FLASH_ON" ? .on : .off
            if let approval = upper(1).flatMap(FlashApproval.init(rawValue:)) {
                self = .flashReply(request: request, approval: approval)
            } else {
                self = request == .on ? .flashOn : .flashOff
            }
        case "TAKE_PHOTO_ON": self = .takePhotoOn
        case "TAKE_PHOTO_OFF": self = .takePhotoOff
        case "STATUS":
            guard let media = upper(1).flatMap(MediaKind.init(rawValue:)),
                  let state = upper(2), state == "MUTED" || state == "UNMUTED"
            else {
                self = .raw(message)
                return
            }
            self = .status(media: media, muted: state == "MUTED", rtcId: rtcId(at: 3))
        default:
            self = .raw(message)
        }
    }

    /// ASCII letters upper-cased, everything else as it is: `uppercased()` would also fold
    /// non-ASCII letters into keywords ("ſtatus" → "STATUS", "ﬂash_on" → "FLASH_ON").
    private static func asciiUppercased(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.map { scalar in
            ("a"..."z").contains(scalar) ? Unicode.Scalar(scalar.value - 32)! : scalar
        }))
    }

    /// The text to send on the data channel.
    public var text: String {
        func withRtcId(_ base: String, _ rtcId: String?) -> String { rtcId.map { base + "|" + $0 } ?? base }
        switch self {
        case .hold(let rtcId): return withRtcId("HOLD", rtcId)
        case .pickup(let rtcId): return withRtcId("PICKUP", rtcId)
        case .flashOn: return FlashRequest.on.rawValue
        case .flashOff: return FlashRequest.off.rawValue
        case .flashReply(let request, let approval): return request.rawValue + "|" + approval.rawValue
        case .takePhotoOn: return "TAKE_PHOTO_ON"
        case .takePhotoOff: return "TAKE_PHOTO_OFF"
        case .status(let media, let muted, let rtcId):
            return withRtcId("STATUS|" + media.rawValue + "|" + (muted ? "MUTED" : "UNMUTED"), rtcId)
        case .raw(let text): return text
        }
    }

    /// A Swift-literal rendering for logs, e.g. `.hold(rtcId: "rtc-42")`.
    public var description: String {
        func quoted(_ value: String?) -> String { value.map { $0.debugDescription } ?? "nil" }
        switch self {
        case .hold(let rtcId): return ".hold(rtcId: \(quoted(rtcId)))"
        case .pickup(let rtcId): return ".pickup(rtcId: \(quoted(rtcId)))"
        case .flashOn: return ".flashOn"
        case .flashOff: return ".flashOff"
        case .flashReply(let request, let approval):
            return ".flashReply(request: .\(request == .on ? "on" : "off"), approval: .\(String(describing: approval)))"
        case .takePhotoOn: return ".takePhotoOn"
        case .takePhotoOff: return ".takePhotoOff"
        case .status(let media, let muted, let rtcId):
            return ".status(media: .\(String(describing: media)), muted: \(muted), rtcId: \(quoted(rtcId)))"
        case .raw(let text): return ".raw(\(text.debugDescription))"
        }
    }
}
