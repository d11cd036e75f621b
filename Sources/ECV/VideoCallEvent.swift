import Foundation

/// Every event a call reports, named as in the seed guides (English and Turkish) plus
/// `QueueInfoUpdated` (queue position and wait time).
public enum VideoCallEventType: String, Sendable, CaseIterable {
    case None
    case Init
    case GotRtcId
    case DialSuccess
    case Error
    case OnQueue
    case AgentConnected
    case CallEnded
    case SignalingConnected

    case GotLocalStream
    case GotRemoteStream

    case JoinedRoom
    case SignalingRegistered
    case RtcPeerConnectionCreated

    case GotOffer
    case SentOffer
    case GotAnswer
    case SentAnswer

    case AudioMuted
    case AudioUnmuted
    case VideoMuted
    case VideoUnmuted

    case RemoteAudioMuted
    case RemoteAudioUnmuted
    case RemoteVideoMuted
    case RemoteVideoUnmuted

    case StartHold
    case EndHold

    case TakePhotoOn
    case TakePhotoOff

    case WebRtcOnDataChannel
    case TextChannelConnected
    /// Every text received (detail: the raw string); after the command's own event, if any.
    case TextChannelMessage
    case ConnectionTimeoutStart
    case ConnectionTimeoutEnd
    case WebRtcConnected
    case WebRtcRenegotiationNeeded

    case WebRtcDisconnected
    case WebRtcFailed
    case Hangup

    /// The torch is on: the app's `setFlashlightEnabled(state: true)` or an approved agent request
    /// (data `requestedBy`: `agent`) was applied by the `FlashlightHandler`.
    case FlashOn
    /// The torch is off (as `FlashOn`).
    case FlashOff
    /// Beyond the seed: the agent asked for the torch (`FLASH_ON`/`FLASH_OFF`; detail: the text,
    /// data `torch`: `on`/`off`, `requestedBy`: `agent`), before the app's approval. `FlashOn` or
    /// `FlashOff` follows only if the torch was switched.
    case FlashRequested

    case TransferPending
    case TransferCancelled
    case TransferCompleted

    case QueueInfoUpdated

    /// Beyond the seed: a link to the service dropped and is being re-established without ending
    /// the call (detail: which link, `ReconnectingLink`; data `reason`: why it dropped).
    case Reconnecting
    /// Beyond the seed: the link named in the detail is back (re-registered, re-attached).
    case Reconnected

    /// Beyond the seed: bandwidth adaptation changed what this side sends (objData: the
    /// `BandwidthEstimator.Decision`; data: `targetKbps`, `estimateKbps`, `reason`).
    case BandwidthChanged
    /// Added: media the negotiation agreed on has not flowed for 5 s while connected: `detail`
    /// is "video received", "audio sent"…; data `kind`, `direction` (sent/received) and
    /// `everCarried` ("false": not one packet so far). Once per negotiation and direction.
    case MediaSilent
}

/// The links `Reconnecting` and `Reconnected` name in their detail.
public enum ReconnectingLink {
    /// The queue socket (`useQueueSocket`): pushes from the service.
    public static let queueSocket = "queueSocket"
    /// The room's signaling WebSocket (the collider).
    public static let signaling = "signaling"
}

/// One event of a call.
///
/// `objData` carries a related object where the guide says so: the `WebRtcConnection` on
/// `SignalingConnected`, the join answer on `JoinedRoom`, the `QueueInfo` on `QueueInfoUpdated`,
/// the signaling message on offers and answers, the `ErrorObject` on `Error`.
public struct VideoCallEvent: Sendable, CustomStringConvertible {
    public let type: VideoCallEventType
    public let detail: String?
    public let objData: (any Sendable)?
    public let data: [String: String]
    public let createdAt: Date

    public init(type: VideoCallEventType, detail: String? = nil, objData: (any Sendable)? = nil,
                data: [String: String] = [:], createdAt: Date = Date()) {
        self.type = type
        self.detail = detail
        self.objData = objData
        self.data = data
        self.createdAt = createdAt
    }

    /// The failure of an `Error` event, as the guide's events section reads it ("`event.error`
    /// contains the ECVError … check `error.error`"): `error.error` is the `ErrorObject` (the
    /// call's `lastError` at the time), `error.name` its name. nil for every other event.
    public var error: ECVError? {
        guard type == .Error, let object = objData as? ErrorObject else { return nil }
        return ECVError(object)
    }

    /// The event before a call's first one.
    public static let none = VideoCallEvent(type: .None, createdAt: Date(timeIntervalSince1970: 0))

    public var description: String {
        var text = "VideoCallEvent(\(type.rawValue)"
        if let detail { text += ", detail: \(detail.count > 120 ? String(detail.prefix(120)) + "…" : detail)" }
        if !data.isEmpty { text += ", data: \(data)" }
        return text + ")"
    }
}

// Why a call ended: one typed value for every party (`CallEnded.detail` is its raw value).
@_exported import struct ECVProtocol.CallEndReason
