import GLibCore
import GStreamer
import MediaPipeline
import MediaRuntime

/// What a session builds: its webrtcbin with the session-wide settings, and the receive branch
/// behind each incoming stream.
extension PeerSession {
    /// A webrtcbin with the session-wide settings: one bundled transport, the configured jitter
    /// buffer latency, ICE policy and servers, no UPnP, sender reports that keep streams in sync.
    static func makeWebRTCBin(number: Int, configuration: PeerConfiguration) throws(PeerError) -> WebRTCBin {
        do throws(GStreamerError) {
            let webrtc = try WebRTCBin(name: "webrtc\(number)")
            try webrtc.set(WebRTCBin.bundlePolicy, .maxBundle)
            try webrtc.set(WebRTCBin.latency, UInt(max(0, configuration.jitterBufferLatencyMs)))
            try webrtc.set(WebRTCBin.iceTransportPolicy, configuration.iceTransportPolicy.binding)
            try configureICE(webrtc, servers: configuration.iceServers)
            try disableUPnP(webrtc)
            try SenderReportSync.configure(webrtc)
            return webrtc
        } catch {
            throw .setup(error.description)
        }
    }

    /// The first STUN server of `servers` (webrtcbin takes one) and every TURN server.
    static func configureICE(_ webrtc: WebRTCBin, servers: [ICEServer]) throws(GStreamerError) {
        var stunSet = false
        for server in servers {
            for url in server.urls {
                if let stun = ICEServerURLs.stunServer(url) {
                    guard !stunSet else { continue }
                    try webrtc.set(WebRTCBin.stunServer, stun)
                    stunSet = true
                } else if ICEServerURLs.isTURN(url) {
                    try webrtc.addTurnServer(ICEServerURLs.turnURL(url, username: server.username, credential: server.credential))
                }
            }
        }
    }

    /// libnice asks the LAN's router for port mappings (UPnP) by default: per call an HTTP server,
    /// SSDP multicast and GUPnP state shared across calls that trips GLib's hash-table checks when
    /// dozens of calls start at once. A headless server behind STUN/TURN has no use for it.
    static func disableUPnP(_ webrtc: WebRTCBin) throws(GStreamerError) {
        guard let ice = try webrtc.get(WebRTCBin.iceAgent), ice.hasProperty(Self.niceAgent.name),
              let agent = try ice.get(Self.niceAgent), agent.hasProperty(NiceAgentProperty.upnp.name) else { return }
        try agent.set(NiceAgentProperty.upnp, false)
    }

    /// The libnice agent behind webrtcbin's `GstWebRTCICE`.
    static let niceAgent = PropertyKey<Object>("agent")

    /// Compiles and attaches the receive fragment for a new webrtcbin src pad, behind an RTP tee
    /// (which never refuses data, so a recorder can come and go without disturbing playback).
    static func attachIncoming(pad: Pad, session: Int, media: MediaConfiguration, compiler: PipelineCompiler,
                                       pipeline: Pipeline, send: SendMedia?) throws(PeerError) -> (RemoteStream, ReceiveMedia, Element) {
        guard let caps = pad.currentCaps ?? pad.allowedCaps, let structure = caps.structures.first,
              let kind = structure.string("media").flatMap(MediaKind.init(rawValue:)),
              let encoding = structure.string("encoding-name") else {
            throw .incoming("a stream with unusable caps on \(pad.name)")
        }
        let sink = kind == .video ? media.receiveVideo : media.receiveAudio
        let prefix = "rx\(session)_\(kind.rawValue)_\(pad.name.filter { $0.isNumber })"
        let fragment: PipelineFragment
        do throws(PipelineCompileError) {
            fragment = try compiler.compileReceive(kind: kind, encodingName: encoding, sink: sink, parameters: media.parameters,
                                                   idPrefix: prefix)
        } catch {
            throw .incoming("cannot receive \(encoding) \(kind.rawValue): \(error)")
        }
        let tee: Element
        let teeOutput: Pad
        do throws(GStreamerError) {
            tee = try Element(factory: "tee", name: prefix + "_rtp")
            try tee.set(TeeProperty.allowNotLinked, true)
            try pipeline.add(tee)
            tee.syncStateWithParent()
            guard let teeInput = tee.staticPad("sink") else { throw .padNotFound(element: prefix + "_rtp", pad: "sink") }
            teeOutput = try tee.requestPad("src_%u")
            try pad.link(to: teeInput)
        } catch {
            throw .incoming("cannot tap \(kind.rawValue): \(error)")
        }
        let receiver: ReceiveMedia
        do throws(MediaRuntimeError) {
            receiver = try ReceiveMedia(fragment: fragment, into: pipeline, from: teeOutput, send: send)
        } catch {
            pipeline.stopAndRemove(tee)
            throw .incoming("cannot attach \(kind.rawValue): \(error)")
        }
        let stream = RemoteStream(kind: kind, encodingName: encoding, caps: caps.description, ssrc: structure.uint("ssrc"),
                                  sink: sink, appSink: receiver.appSink, recorderTee: receiver.recorderTee, rtpTee: tee)
        return (stream, receiver, tee)
    }
}
