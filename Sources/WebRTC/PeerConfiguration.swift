import GStreamer
import MediaPipeline

/// One entry of `pc_config.iceServers`: STUN or TURN URLs with optional credentials.
package struct ICEServer: Sendable, Hashable, Codable {
    package var urls: [String]
    package var username: String?
    package var credential: String?

    package init(urls: [String], username: String? = nil, credential: String? = nil) {
        self.urls = urls
        self.username = username
        self.credential = credential
    }

    /// Whether any of its URLs is a TURN server's (a relay-only policy needs one).
    package var isTURN: Bool { urls.contains(where: ICEServerURLs.isTURN) }
}

/// Which candidates ICE may use: every kind, or relayed (TURN) only.
package enum ICETransportPolicy: String, Sendable, Hashable {
    case all, relay

    /// webrtcbin's value for it.
    var binding: WebRTCBin.ICETransportPolicy {
        switch self {
        case .all: .all
        case .relay: .relay
        }
    }
}

/// How a peer connection is set up: ICE servers and policies, media, and how long to wait.
package struct PeerConfiguration: Sendable {
    package var iceServers: [ICEServer]
    package var iceTransportPolicy: ICETransportPolicy
    /// The jitter buffer latency of received streams, in milliseconds (webrtcbin `latency`).
    /// In-order packets pass at once; it is the time a lost packet has to be resent. A stream's
    /// first packets no longer wait it out: the buffer starts once two arrive in sequence
    /// (`JitterBufferSetup.fastStartPackets`). 100 ms (GStreamer's default is 200) still covers
    /// retransmission over round trips up to ~80 ms.
    package var jitterBufferLatencyMs: Int
    /// No media or data for this long while connected reports `.disconnected`: the bound for a
    /// far end that sends media or reports often. One that only reports, as seldom as RFC 3550
    /// allows, is given up to 15 s (`FarEndSilence`).
    package var disconnectedAfter: Duration
    /// Still nothing after this long reports `.failed` (as much longer for a seldom reporter).
    package var failedAfter: Duration
    package var media: MediaConfiguration
    /// The key of the DTLS certificate (one per process and key type): ECDSA P-256 by default,
    /// because some stacks (aiortc) accept only ECDHE-ECDSA suites; nil keeps GStreamer's own
    /// RSA certificate.
    package var dtlsKeyType: DTLSCertificate.KeyType?
    /// The shortest time between regular RTCP reports (rtpsession `rtcp-min-interval`). Under the
    /// feedback profile WebRTC uses, one early report (a PLI, FIR or NACK) is allowed per such
    /// interval and the next waits for a regular report; GStreamer's 5 s default made a second
    /// key-frame request (the recorder's, after the decoder's) wait seconds for the far end.
    /// 100 ms keeps every request within ~0.15 s for up to ~10 reports a second (~8 kbit/s).
    package var rtcpMinInterval: Duration
    /// Sends this side's DTLS handshake flight again every 150 ms while the far end has answered
    /// nothing new (`HandshakeReplay`): OpenSSL's own retransmission waits 1 s, doubling, and
    /// GStreamer 1.22 lets no one set it. On by default; off only to measure the difference.
    package var replaysHandshake = true
    /// Sends the far end a connectivity check every 150 ms until it sends something
    /// (`ConnectivityNudge`): over the selected pair once this side's ICE is through, and from
    /// this side's host candidates' sockets if it is not through 450 ms after both descriptions are
    /// there. libnice answers a check with a check of its own at once (the controlling side's
    /// nominating check among them), where its own schedule waits 0.5 s, 1 s, 2 s, 4 s. On by
    /// default; off only to measure the difference.
    package var nudgesConnectivityChecks = true

    /// A conversation's jitter buffer: late packets past it are given up as lost.
    package static let defaultJitterBufferLatencyMs = 100

    package init(iceServers: [ICEServer] = [], iceTransportPolicy: ICETransportPolicy = .all,
                jitterBufferLatencyMs: Int = defaultJitterBufferLatencyMs, disconnectedAfter: Duration = .seconds(3),
                failedAfter: Duration = .seconds(10), media: MediaConfiguration = MediaConfiguration(),
                dtlsKeyType: DTLSCertificate.KeyType? = .ecdsaP256, rtcpMinInterval: Duration = .milliseconds(100)) {
        self.dtlsKeyType = dtlsKeyType
        self.rtcpMinInterval = rtcpMinInterval
        self.iceServers = iceServers
        self.iceTransportPolicy = iceTransportPolicy
        self.jitterBufferLatencyMs = jitterBufferLatencyMs
        self.disconnectedAfter = disconnectedAfter
        self.failedAfter = failedAfter
        self.media = media
    }
}

/// What a peer sends and what it does with what it receives.
package struct MediaConfiguration: Sendable {
    package var parameters: MediaParameters
    package var video: VideoInputs
    package var audio: AudioSourceSpec
    /// What to do with each incoming stream, by kind.
    package var receiveVideo: ReceiveSinkSpec
    package var receiveAudio: ReceiveSinkSpec
    /// Whether to send media at all (a receive-only peer still offers/answers recvonly media).
    package var sendsMedia: Bool
    package var catalog: (any ElementCatalog)?
    package var presets: PresetLibrary
    /// When set, the outgoing raw video is also delivered to an appsink of this name (RGBA): the
    /// headless local video renderer. Find it with `SendMedia.appSink(named:)`.
    package var localPreview: String?
    /// Whether a peer that sends nothing still offers or answers media (receive-only). False:
    /// no media sections at all, only data channels (a PeerJS data connection).
    package var receivesMedia = true
    /// Send media that the application pushes already encoded (`PreEncodedSend`) instead of
    /// `video`/`audio`: no encoder runs. For the benchmarks' load generator.
    package var sendsPreEncodedMedia = false

    package init(parameters: MediaParameters = MediaParameters(), video: VideoInputs = .single(.testPattern()),
                audio: AudioSourceSpec = .testTone(), receiveVideo: ReceiveSinkSpec = .discard,
                receiveAudio: ReceiveSinkSpec = .discard, sendsMedia: Bool = true,
                catalog: (any ElementCatalog)? = nil, presets: PresetLibrary = .builtIn, localPreview: String? = nil) {
        self.localPreview = localPreview
        self.parameters = parameters
        self.video = video
        self.audio = audio
        self.receiveVideo = receiveVideo
        self.receiveAudio = receiveAudio
        self.sendsMedia = sendsMedia
        self.catalog = catalog
        self.presets = presets
    }
}
