import BenchmarkSupport
import ECVProtocol
import Foundation
import GLibCore
import GStreamer
import Soup

/// One call of a `webrtcbin-agents` bot: the barest GStreamer 1.22 peer that does a cost bot's job,
/// built from the binding alone (no WebRTC, CallEngine or ECVAgent). One pipeline per call holding one
/// `webrtcbin` with its defaults (max-bundle, its own 200 ms jitter buffers, no STUN server: host
/// candidates, as the Pion bot), two receive-only transceivers (VP8 with NACK, PLI and FIR; Opus), the
/// text data channel when it offers, as the protocol's initiator must; each incoming stream into a
/// `fakesink` (`sync=false`, `async=false`) or, recording, depayloaded into one `matroskamux` → `filesink`
/// without decoding. The room's signaling as the SDK and the Pion bot speak it (docs/protocol.md §2).
final class WebrtcbinCall: Sendable {
    let rtcId: String
    private let pipeline: Pipeline
    private let webrtc: WebRTCBin
    private let recorder: Recorder?
    private let counters: Locked<WebrtcbinAgents.Counters>
    private let state = Locked(State())

    private struct State {
        var socket: WebSocketConnection?
        var remoteSet = false
        var pending: [ECVProtocol.ICECandidate] = []
        /// The local description's media ids, by m-line index, named in the candidates sent.
        var mids: [String] = []
        var connected = false
        var ended = false
        var signals: [SignalConnection] = []
    }

    /// The recording branch, built before any stream arrives so that the muxer waits for both tracks.
    private struct Recorder: Sendable {
        var video: Element
        var audio: Element
        var file: Element
    }

    static let videoCaps = "application/x-rtp,media=video,encoding-name=VP8,clock-rate=90000,payload=96,"
        + "rtcp-fb-nack=(boolean)true,rtcp-fb-nack-pli=(boolean)true,rtcp-fb-ccm-fir=(boolean)true"
    static let audioCaps = "application/x-rtp,media=audio,encoding-name=OPUS,clock-rate=48000,payload=111,encoding-params=(string)2"

    private init(rtcId: String, record: URL?, counters: Locked<WebrtcbinAgents.Counters>) throws {
        self.rtcId = rtcId
        self.counters = counters
        pipeline = Pipeline(name: "call")
        webrtc = try WebRTCBin(name: "webrtc")
        try webrtc.set(WebRTCBin.bundlePolicy, .maxBundle)
        try pipeline.add(webrtc)
        if let record {
            let video = try Element(factory: "rtpvp8depay"), audio = try Element(factory: "rtpopusdepay")
            let mux = try Element(factory: "matroskamux"), file = try Element(factory: "filesink")
            try file.set("location", record.path)
            try file.set("async", false)
            try pipeline.add([video, audio, mux, file])
            try video.link(pad: "src", to: mux, pad: "video_%u")
            try audio.link(pad: "src", to: mux, pad: "audio_%u")
            try mux.link(to: file)
            // Finished when the file sink has its end of stream (see `finish`).
            try pipeline.set("message-forward", true)
            recorder = Recorder(video: video, audio: audio, file: file)
        } else {
            recorder = nil
        }
    }

    /// Joins the call's room, builds the peer, registers on the collider socket and offers or answers.
    static func start(client: HTTPClient, base: String, token: String, rtcId: String, record: URL?,
                      counters: Locked<WebrtcbinAgents.Counters>) async throws -> WebrtcbinCall {
        var join = HTTPRequest(method: "POST", url: base + ECVAPI.joinPath(room: rtcId), headers: [ECVAPI.callTokenHeader: token])
        join.body = []
        let joined = try await client.send(join).json(JoinResponse.self)
        guard joined.result == .success, let room = joined.params else { throw BenchmarkError.badInput("join \(rtcId): \(joined.result)") }
        let call = try WebrtcbinCall(rtcId: rtcId, record: record, counters: counters)
        do {
            try await call.build()
            let socket = try await WebSocketClient.connect(url: room.wssUrl + "?" + ECVAPI.tokenQueryName + "=" + token)
            try socket.send(text: String(decoding: try JSONEncoder().encode(ColliderCommand.register(roomId: rtcId, clientId: room.clientId)), as: UTF8.self))
            call.state.withLock { $0.socket = socket }
            if room.isInitiator { try await call.offer() }
            for message in room.messages { await call.handle(message) }
            Task { await call.read(socket) }
        } catch {
            call.end()
            throw error
        }
        return call
    }

    private func build() async throws {
        try await pipeline.play()
        try webrtc.addTransceiver(direction: .recvonly, caps: try Caps(Self.videoCaps))
        try webrtc.addTransceiver(direction: .recvonly, caps: try Caps(Self.audioCaps))
        let recorder = self.recorder, pipeline = self.pipeline
        var signals = [try webrtc.onICECandidate { [weak self] mline, candidate in self?.sendCandidate(mline: mline, candidate) }]
        signals.append(try webrtc.onSourcePadAdded { pad in
            let media = (pad.currentCaps ?? pad.allowedCaps)?.structures.first?.string("media")
            do {
                if let recorder {
                    guard let sink = (media == "video" ? recorder.video : recorder.audio).staticPad("sink") else { return }
                    try pad.link(to: sink)
                } else {
                    let sink = try Element(factory: "fakesink")
                    try sink.set("sync", false)
                    try sink.set("async", false)
                    try pipeline.add(sink)
                    _ = sink.syncStateWithParent()
                    guard let input = sink.staticPad("sink") else { return }
                    try pad.link(to: input)
                }
            } catch {
                emit("event - failed linking \(media ?? "?"): \(error)")
            }
        })
        signals += try webrtc.onStateChange { [weak self] webrtc in self?.connectionChanged(webrtc.connectionState) }
        state.withLock { $0.signals = signals }
    }

    private func offer() async throws {
        _ = try webrtc.createDataChannel(label: "textchannel", options: nil)
        let offer = try await webrtc.createOffer()
        noteMids(offer.sdp)
        try await webrtc.setLocalDescription(offer)
        send(.offer(sdp: offer.sdp))
    }

    private func read(_ socket: WebSocketConnection) async {
        for await event in socket.events {
            guard case .text(let text) = event,
                  case .message(let message)? = try? JSONDecoder().decode(ColliderDelivery.self, from: Data(text.utf8)) else { continue } // why: a failure delivery or an unknown frame changes nothing here
            await handle(message)
        }
    }

    private func handle(_ message: SignalingMessage) async {
        do {
            switch message {
            case .offer(let sdp):
                try await webrtc.setRemoteDescription(SessionDescription(kind: .offer, sdp: sdp))
                remoteDescriptionSet()
                let answer = try await webrtc.createAnswer()
                noteMids(answer.sdp)
                try await webrtc.setLocalDescription(answer)
                send(.answer(sdp: answer.sdp))
            case .answer(let sdp):
                try await webrtc.setRemoteDescription(SessionDescription(kind: .answer, sdp: sdp))
                remoteDescriptionSet()
            case .candidate(let candidate):
                let early = state.withLock { state in
                    if !state.remoteSet { state.pending.append(candidate) }
                    return !state.remoteSet
                }
                if !early { try webrtc.addICECandidate(mlineIndex: UInt(max(0, candidate.sdpMLineIndex)), candidate: candidate.candidate) }
            case .bye:
                break // the agent socket's call_ended ends the call
            }
        } catch {
            emit("event \(rtcId) failed signaling: \(error)")
        }
    }

    private func remoteDescriptionSet() {
        let pending = state.withLock { state in
            state.remoteSet = true
            defer { state.pending = [] }
            return state.pending
        }
        for candidate in pending {
            // why: a candidate webrtcbin cannot use is one pair fewer, as in a browser
            try? webrtc.addICECandidate(mlineIndex: UInt(max(0, candidate.sdpMLineIndex)), candidate: candidate.candidate)
        }
    }

    private func noteMids(_ sdp: String) {
        let mids = sdp.split(whereSeparator: \.isNewline).filter { $0.hasPrefix("a=mid:") }.map { String($0.dropFirst(6)) }
        state.withLock { $0.mids = mids }
    }

    private func sendCandidate(mline: Int, _ candidate: String) {
        let mid = state.withLock { $0.mids.indices.contains(mline) ? $0.mids[mline] : $0.mids.first ?? "0" }
        send(.candidate(ECVProtocol.ICECandidate(sdpMLineIndex: mline, sdpMid: mid, candidate: candidate)))
    }

    private func send(_ message: SignalingMessage) {
        guard let socket = state.withLock({ $0.ended ? nil : $0.socket }),
              let data = try? JSONEncoder().encode(ColliderCommand.send(message)) else { return } // why: an ended call sends nothing
        // why: a failed send shows as a call that never connects, which the parent counts
        try? socket.send(text: String(decoding: data, as: UTF8.self))
    }

    private func connectionChanged(_ connection: WebRTCBin.PeerConnectionState) {
        let change: Int = state.withLock { state in
            let now = connection == .connected && !state.ended
            defer { state.connected = now }
            return now == state.connected ? 0 : (now ? 1 : -1)
        }
        guard change != 0 else { return }
        counters.withLock { $0.connected += change }
        if change < 0, connection != .closed { emit("event \(rtcId) disconnected") }
    }

    /// Counts the call as recording once both streams reach the muxer (called by the bot's status tick).
    var isRecording: Bool {
        guard let recorder, !state.withLock(\.ended) else { return false }
        return recorder.video.staticPad("sink")?.hasSegment == true && recorder.audio.staticPad("sink")?.hasSegment == true
    }

    var isConnected: Bool { state.withLock(\.connected) }

    /// Ends the call: a recording is finished first (end of stream into both depayloaders, up to 5 s
    /// for the file sink to take it), then the pipeline stops and the room's socket closes.
    func end() {
        let (socket, signals, wasConnected) = state.withLock { state in
            defer { state.ended = true; state.signals = []; state.socket = nil }
            return (state.socket, state.signals, state.connected && !state.ended)
        }
        for signal in signals { signal.cancel() }
        if wasConnected { counters.withLock { $0.connected -= 1 } }
        state.withLock { $0.connected = false }
        try? socket?.close() // why: a socket the service already closed needs no close
        guard let recorder else {
            pipeline.stop()
            return
        }
        let finished = OneShot<Void, Never>()
        let observation = pipeline.observeMessages { message in
            if case .element(_, let structure) = message, structure.name == "GstBinForwarded" { _ = finished.resolve(.success(())) }
        }
        for element in [recorder.video, recorder.audio] { _ = element.staticPad("sink")?.sendEndOfStream() }
        counters.withLock { $0.finishing += 1 }
        Task {
            try? await Task.sleep(for: .seconds(5)) // why: cancelled never; the recording's end waits no longer
            _ = finished.resolve(.success(()))
        }
        Task {
            await finished.value()
            observation.cancel()
            self.pipeline.stop()
            self.counters.withLock { $0.finishing -= 1 }
        }
    }
}
