import ECV
import ECVProtocol
import MediaPipeline
import WebRTC

/// How a headless agent bot connects and what it sends and does with a caller's media.
public struct AgentBotConfiguration: Sendable {
    /// The service's base URL (REST and agent socket).
    public var serviceUrl: String
    /// The AppRTC room server and collider; default `serviceUrl`.
    public var webrtcUrl: String
    public var signalingUrl: String?
    public var name: String
    public var secret: String?
    /// The queues `ready()` works when given none.
    public var queues: [String]
    /// Accept offers by themselves (a policy decides which); false: the app calls `accept`/`reject`.
    public var autoAccept: Bool
    public var acceptPolicy: @Sendable (CallOffer) -> Bool
    /// What the agent sends (codec, size, bitrate…) and the text channel it uses.
    public var parameters: ConnectParameters
    public var video: VideoInputs
    public var audio: AudioSourceSpec
    /// What happens to the caller's video and audio: decode to a renderer (default), keep encoded
    /// for a recorder only (`.passthrough`), or discard.
    public var receiveVideo: ReceiveSinkSpec
    public var receiveAudio: ReceiveSinkSpec
    /// ICE servers used besides the join answer's.
    public var iceServers: [ECVProtocol.ICEServer]
    /// How long a flash request waits for the caller's answer before it counts as refused.
    public var flashReplyTimeout: Duration
    /// False: accepted calls never join their room (an agent whose media never comes, for tests
    /// of the caller's connection timeout).
    public var joinsRooms: Bool
    /// How long after accepting a call the bot joins its room (zero: at once). The first to
    /// join a room makes the offer: a bot that waits until the caller is in lets the caller offer.
    public var roomJoinDelay: Duration = .zero
    /// False: the bot sends no media (a recording or monitoring bot: no encoding cost per call).
    public var sendsMedia: Bool
    /// How long the call's jitter buffers wait for late and resent packets before giving them up
    /// as lost (100 ms, a conversation's). A bot that only records (no decoding) can wait a second:
    /// nobody is waiting for its picture, and on a busy host a packet delayed by scheduling then
    /// becomes a delay instead of a hole in the file (100 recording bots on 2 busy cores: 8 of 100
    /// files complete at 100 ms, 93 at 1,000 ms; Benchmarks/README.md, "Cost of a call"). Decoding
    /// bots keep 100 ms: at 1 s their calls stalled in the same benchmark, not understood yet.
    public var jitterBufferLatencyMs = 100
    /// Pins the service's certificate must match for Login and the agent socket (the forms of
    /// docs/protocol.md §0.2). A malformed pin makes `AgentBot(configuration:)` throw.
    public var pinnedCertificates: [String] = []
    /// Pins for the rooms and the collider; empty: `pinnedCertificates` apply there too.
    public var signalingPinnedCertificates: [String] = []
    /// A PEM file of CA certificates trusted instead of the system store.
    public var trustedCAFile: String?
    /// The bot serves customers with hearing or visual impairment first: the service offers it
    /// such calls before other free agents (EnQualify's accessibility routing).
    public var servesAccessibility = false

    public init(serviceUrl: String, name: String = "Agent Bot", secret: String? = nil, queues: [String] = [],
                webrtcUrl: String? = nil, signalingUrl: String? = nil, autoAccept: Bool = true,
                acceptPolicy: @escaping @Sendable (CallOffer) -> Bool = { _ in true },
                parameters: ConnectParameters = ConnectParameters(videoWidth: 640, videoHeight: 480),
                video: VideoInputs = .single(.testPattern(pattern: "ball")), audio: AudioSourceSpec = .testTone(frequency: 660),
                receiveVideo: ReceiveSinkSpec = .renderer(name: "caller_video"), receiveAudio: ReceiveSinkSpec = .discard,
                iceServers: [ECVProtocol.ICEServer] = [], flashReplyTimeout: Duration = .seconds(30), joinsRooms: Bool = true) {
        self.joinsRooms = joinsRooms
        sendsMedia = true
        self.serviceUrl = serviceUrl
        self.webrtcUrl = webrtcUrl ?? serviceUrl
        self.signalingUrl = signalingUrl
        self.name = name
        self.secret = secret
        self.queues = queues
        self.autoAccept = autoAccept
        self.acceptPolicy = acceptPolicy
        self.parameters = parameters
        self.video = video
        self.audio = audio
        self.receiveVideo = receiveVideo
        self.receiveAudio = receiveAudio
        self.iceServers = iceServers
        self.flashReplyTimeout = flashReplyTimeout
    }
}

/// Why a bot operation failed.
public enum AgentBotError: Error, Sendable, CustomStringConvertible {
    case login(String)
    case socket(String)
    case rejected(code: String, message: String)
    case notConnected
    case noSuchCall(String)
    /// The call itself failed: its media, its peer connection, its recording (the cause every
    /// product's errors carry).
    case call(CallFailure)
    case timeout(String)
    /// A command could not be sent on the call's text channel.
    case textChannel(String)

    public var description: String {
        switch self {
        case .login(let reason): "agent login failed: \(reason)"
        case .socket(let reason): "agent socket: \(reason)"
        case .rejected(let code, let message): "the service refused: \(code) \(message)"
        case .notConnected: "the bot is not connected; call connect() first"
        case .noSuchCall(let rtcId): "no call \(rtcId) on this bot"
        case .call(let failure): failure.description
        case .timeout(let what): "timed out waiting for \(what)"
        case .textChannel(let reason): "text channel: \(reason)"
        }
    }
}
