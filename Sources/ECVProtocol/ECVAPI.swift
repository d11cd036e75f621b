import Foundation

/// Default paths of every ECV endpoint (docs/protocol.md §1–§3). The SDK lets each be overridden
/// per configuration; the reference service serves exactly these.
public enum ECVAPI {
    // ECV REST on serviceUrl.
    public static let getRtcId = "/api/GetRtcId"
    public static let dialEx = "/api/DialEx"
    public static let hangup = "/api/Hangup"
    public static let waitForRoomInterval = "/api/WaitForRoomInterval"
    public static let waitForRoomQueueInterval = "/api/WaitForRoomQueueInterval"
    public static let queueSocket = "/api/QueueSocket"
    public static let queues = "/api/Queues"
    /// The query parameter that carries the rtcId on polling endpoints and the queue socket.
    public static let rtcIdQueryName = "rtcId"

    // Agent side on serviceUrl.
    public static let agentLogin = "/agent/api/Login"
    public static let agentLogout = "/agent/api/Logout"
    public static let agentSocket = "/agent/socket"
    public static let agentIdQueryName = "agentId"
    /// The query parameter carrying a credential where a header cannot be set (browser
    /// WebSockets, links): an agent's session token, or a call's caller token (§1.9).
    public static let tokenQueryName = "token"
    /// The header carrying a call credential on caller REST, the queue socket and room requests:
    /// the caller token from DialEx, or the agent's session token in its call's room (§1.9).
    public static let callTokenHeader = "X-ECV-Token"
    /// A client-chosen key on DialEx that makes it safe to retry: the service answers a repeated
    /// DialEx carrying the same key with the first one's answer instead of creating a second call.
    public static let idempotencyKeyHeader = "Idempotency-Key"

    // AppRTC room server on webrtcUrl and collider on signalingUrl.
    public static let signalingSocket = "/ws"

    public static func joinPath(room: String) -> String { "/join/" + pathSegment(room) }
    public static func messagePath(room: String, client: String) -> String {
        "/message/" + pathSegment(room) + "/" + pathSegment(client)
    }
    public static func leavePath(room: String, client: String) -> String {
        "/leave/" + pathSegment(room) + "/" + pathSegment(client)
    }
    /// The collider's HTTP side under `wss_post_url`: POST relays a message, DELETE unregisters.
    public static func colliderPostPath(room: String, client: String) -> String {
        "/" + pathSegment(room) + "/" + pathSegment(client)
    }
    /// The page a browser opens to join the call (what `VideoCall.getUrl()` returns, under webrtcUrl).
    public static func browserRoomPath(room: String) -> String { "/r/" + pathSegment(room) }

    /// `base` + `path` with one trailing slash of `base` dropped, so both `http://h:1` and
    /// `http://h:1/` configurations work.
    public static func url(base: String, path: String) -> String {
        var base = base
        if base.hasSuffix("/") { base.removeLast() }
        return base + path
    }

    /// Appends an rtcId to a polling endpoint the way the SDK's configurable endpoints work: the
    /// configured string ends with the query key (`…?rtcId=` or `/custom/pollstatus?callid=`).
    public static func appendingRtcId(_ rtcId: String, to endpoint: String) -> String {
        endpoint + (rtcId.addingPercentEncoding(withAllowedCharacters: .ecvUnreserved) ?? rtcId)
    }

    /// The WebSocket URL for an http(s) base: `http` → `ws`, `https` → `wss`.
    public static func webSocketBase(_ httpBase: String) -> String {
        if httpBase.hasPrefix("https://") { return "wss://" + httpBase.dropFirst("https://".count) }
        if httpBase.hasPrefix("http://") { return "ws://" + httpBase.dropFirst("http://".count) }
        return httpBase
    }

    /// rtcIds name AppRTC rooms and travel in URL paths and queries, so they are limited to URL
    /// unreserved characters: `[A-Za-z0-9._~-]`, 1 to 128 of them.
    public static func isValidRtcId(_ rtcId: String) -> Bool {
        guard (1...128).contains(rtcId.utf8.count) else { return false }
        return rtcId.unicodeScalars.allSatisfy { CharacterSet.ecvUnreserved.contains($0) }
    }

    private static func pathSegment(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .ecvUnreserved) ?? text
    }
}

extension CharacterSet {
    /// RFC 3986 unreserved characters.
    static let ecvUnreserved = CharacterSet(
        charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
}

/// The acdAttributes keys the reference ACD reads (docs/protocol.md §1.2). Everything else in
/// acdAttributes is carried to the agent untouched.
public enum ACDAttributeKey {
    /// Integer; larger is served first; default 0.
    public static let priority = "priority"
    /// `"true"`/`"false"`: the EnQualify "handicapped" flags; either true lifts the priority.
    public static let hearingImpaired = "hearingImpaired"
    public static let visuallyImpaired = "visuallyImpaired"
}

/// WebSocket close codes the service uses on the queue socket, the agent socket and the collider.
public enum ECVCloseCode {
    /// After a terminal push (`call_ended`, `transfer_completed`): an expected close.
    public static let normal: UInt16 = 1000
    /// The service is shutting down.
    public static let goingAway: UInt16 = 1001
    /// The upgrade request lacked a required query parameter.
    public static let badRequest: UInt16 = 4400
    /// The agent token or the call's caller token is missing or wrong.
    public static let unauthorized: UInt16 = 4401
    /// The rtcId, agent or room client is unknown.
    public static let notFound: UInt16 = 4404
    /// A newer socket for the same rtcId or agent replaced this one.
    public static let replaced: UInt16 = 4409
}
