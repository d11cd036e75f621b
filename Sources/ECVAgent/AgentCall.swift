import ECV
import ECVProtocol
import Foundation
import GStreamer
import MediaPipeline
import MediaRuntime
import WebRTC
import GLibCore

/// One call an agent bot accepted: the room, the peer connection, the text channel and the
/// agent's commands (hold, flash, photo, status, transfer, hangup).
public final class AgentCall: Sendable {
    public let offer: CallOffer
    public var rtcId: String { offer.rtcId }
    /// Weak: a call's tasks (a late `bye`, the service's end) may outlive the bot that took it.
    private weak let bot: AgentBot?
    private let broadcaster = Broadcaster<AgentCallEvent>()

    private struct State {
        var room: RoomSignaling?
        var peer: PeerConnection?
        var channel: DataChannelHandle?
        var tasks: [Task<Void, Never>] = []
        var ended = false
        var connected = false
        var flashWaiters: [OneShot<String, Never>] = []
    }
    private let state = Locked(State())
    /// The call's recording: separate tracks (with this bot's actions as chapters) or one picture.
    private enum Recording: Sendable {
        case tracks(CallRecording)
        case composite(CompositeRecording)
    }
    private let recording = Locked<Recording?>(nil)
    private let renderer = Locked<(@Sendable (VideoFrame) -> Void)?>(nil)
    private let history = Locked<[AgentCallEvent]>([])

    init(offer: CallOffer, bot: AgentBot) {
        self.offer = offer
        self.bot = bot
        InstanceCounter.increment("AgentCall")
    }

    deinit { InstanceCounter.decrement("AgentCall") }

    /// Every event from now on.
    public func events() -> AsyncStream<AgentCallEvent> { broadcaster.subscribe() }
    /// Every event so far, in order (for bots that subscribe late and for tests).
    public var eventHistory: [AgentCallEvent] { history.value }
    public var peerConnection: PeerConnection? { state.value.peer }
    public var isConnected: Bool { state.value.connected }
    public var isEnded: Bool { state.value.ended }

    /// Receives the caller's decoded frames (when the bot decodes video).
    public func onCallerFrame(_ handler: @escaping @Sendable (VideoFrame) -> Void) { renderer.withLock { $0 = handler } }

    func emit(_ event: AgentCallEvent) {
        history.withLock { $0.append(event) }
        broadcaster.yield(event)
    }

    // MARK: Media

    func start() async {
        guard let bot else { return }
        let configuration = bot.configuration
        let signalingPins = configuration.signalingPinnedCertificates.isEmpty
            ? configuration.pinnedCertificates : configuration.signalingPinnedCertificates
        let room: RoomSignaling
        do {
            room = try RoomSignaling(room: rtcId, options: .init(webrtcUrl: configuration.webrtcUrl, signalingUrl: configuration.signalingUrl,
                                                                 pinnedCertificates: signalingPins, credential: bot.sessionToken,
                                                                 trustedCAFile: configuration.trustedCAFile))
        } catch {
            bot.eventError("call \(rtcId): \(error)")
            await hangup()
            return
        }
        state.withLock { $0.room = room }
        do {
            let joined = try await room.join()
            emit(.joinedRoom(initiator: joined.isInitiator))
            try await room.openSocket()
            try room.register()
            let servers = joined.pcConfig.iceServers.map { WebRTC.ICEServer(urls: $0.urls, username: $0.username, credential: $0.credential) }
                + configuration.iceServers
            let media = MediaConfiguration(parameters: configuration.parameters, video: configuration.video, audio: configuration.audio,
                                           receiveVideo: configuration.receiveVideo, receiveAudio: configuration.receiveAudio,
                                           sendsMedia: configuration.sendsMedia)
            let peer = PeerConnection(configuration: PeerConfiguration(iceServers: servers, media: media),
                                      role: joined.isInitiator ? .offerer : .answerer) { message in
                room.send(ECVProtocol.SignalingMessage(message))
            }
            state.withLock { $0.peer = peer }
            observe(peer: peer, room: room)
            let text = configuration.parameters.textChannelConfig.flatMap { $0.enabled ? $0 : nil }
            try await peer.start(dataChannels: text.map { [$0] } ?? [])
            if let text { attach(await peer.openDataChannel(text)) }
            for message in joined.messages { await deliver(message, to: peer) }
        } catch {
            bot.eventError("call \(rtcId): \(error)")
            await hangup()
        }
    }

    private func observe(peer: PeerConnection, room: RoomSignaling) {
        let peerEvents = peer.events(), roomEvents = room.events()
        let tasks = [
            Task { [weak self] in
                for await event in peerEvents {
                    guard let self else { return }
                    switch event {
                    case .stateChanged(.connected):
                        self.state.withLock { $0.connected = true }
                        self.emit(.connected)
                    case .stateChanged(.disconnected), .stateChanged(.failed):
                        self.state.withLock { $0.connected = false }
                        self.emit(.disconnected)
                        if case .stateChanged(.failed) = event, await peer.role == .offerer { try? await peer.rebuild() }
                    case .remoteStream(let stream):
                        if stream.kind == .video, let sink = stream.appSink {
                            let renderer = self.renderer
                            sink.setSampleHandler { sample in
                                if let handler = renderer.value, let frame = sample.videoFrame() { handler(frame) }
                            }
                        }
                        self.emit(.remoteStream(kind: stream.kind.rawValue, codec: stream.encodingName))
                    case .error(let message):
                        self.bot?.eventError("call \(self.rtcId): webrtc: \(message)")
                    case .unmatchedMedia(_, let reason):
                        self.bot?.eventError("call \(self.rtcId): \(reason)")
                    case .adoptedDataChannel(let remoteLabel, let configuredLabel):
                        self.bot?.eventError("call \(self.rtcId): the caller opened its text channel as '\(remoteLabel)', not '\(configuredLabel)'; using it as the text channel")
                    default:
                        break
                    }
                }
            },
            Task { [weak self] in
                for await event in roomEvents {
                    guard let self else { return }
                    if case .message(let message) = event {
                        if case .bye = message { self.remoteLeft(); continue }
                        await self.deliver(message, to: peer)
                    }
                }
            },
        ]
        state.withLock { $0.tasks += tasks }
    }

    private func deliver(_ message: ECVProtocol.SignalingMessage, to peer: PeerConnection) async {
        if case .bye = message { remoteLeft(); return }
        await peer.receive(message.peerMessage)
    }

    private func attach(_ channel: DataChannelHandle) {
        state.withLock { $0.channel = channel }
        let events = channel.events()
        let task = Task { [weak self] in
            for await event in events {
                guard let self else { return }
                switch event {
                case .open: self.emit(.textChannelOpen)
                case .text(let text): self.received(text)
                default: break
                }
            }
        }
        state.withLock { $0.tasks.append(task) }
    }

    private func received(_ text: String) {
        switch DataChannelCommand(parsing: text) {
        case .status(let media, let muted, _):
            emit(.callerStatus(media: media.rawValue, muted: muted))
            let period = "caller \(media.rawValue.lowercased()) muted"
            try? muted ? activeRecording?.beginPeriod(period) : activeRecording?.endPeriod(period)
        case .flashReply(let request, let approval):
            emit(.flashReply(turningOn: request == .on, approval: approval.rawValue))
            let waiters = state.withLock { state in defer { state.flashWaiters = [] }; return state.flashWaiters }
            for waiter in waiters { waiter.resolve(.success(approval.rawValue)) }
        default:
            emit(.text(text))
        }
    }

    // MARK: Commands

    /// Sends a command (or any text) to the caller on the text channel.
    public func send(_ command: DataChannelCommand) throws(DataChannelError) {
        guard let channel = state.value.channel else { throw .closed(label: "textchannel") }
        try channel.send(command.text)
    }

    public func hold() throws(DataChannelError) {
        try send(.hold(rtcId: rtcId))
        try? activeRecording?.beginPeriod("hold")
    }

    public func pickup() throws(DataChannelError) {
        try send(.pickup(rtcId: rtcId))
        try? activeRecording?.endPeriod("hold")
    }
    public func takePhoto(_ on: Bool) throws(DataChannelError) { try send(on ? .takePhotoOn : .takePhotoOff) }
    public func sendStatus(media: DataChannelCommand.MediaKind, muted: Bool) throws(DataChannelError) {
        try send(.status(media: media, muted: muted, rtcId: rtcId))
    }

    /// Asks the caller to switch the torch and waits for the answer ("ACCEPTED", "REFUSED",
    /// "UNAVAILABLE"); no answer within the bot's `flashReplyTimeout` counts as "REFUSED".
    public func requestFlash(_ on: Bool) async throws(DataChannelError) -> String {
        let reply = OneShot<String, Never>()
        state.withLock { $0.flashWaiters.append(reply) }
        try send(on ? .flashOn : .flashOff)
        let timer = MainLoop.shared.schedule(after: bot?.configuration.flashReplyTimeout ?? .seconds(5)) { reply.resolve(.success("REFUSED")) }
        defer { timer.cancel() }
        return await reply.value()
    }

    /// Transfers the call to a queue or another agent (the service does it; the caller re-queues).
    public func transfer(to target: TransferTarget) async throws(AgentBotError) {
        try? activeRecording?.mark("transfer to \(target.description)")
        guard let bot else { throw .notConnected }
        try await bot.request(.transfer(rtcId: rtcId, target: target))
    }

    public func cancelTransfer() async throws(AgentBotError) {
        guard let bot else { throw .notConnected }
        try await bot.request(.cancelTransfer(rtcId: rtcId))
    }

    /// Ends the call for everyone: the service tells the caller (`REMOTE_HANGUP` there).
    public func hangup() async {
        guard !state.value.ended else { return }
        try? await bot?.request(.hangup(rtcId: rtcId))
        await closeMedia(sendBye: true)
        finish(reason: "AGENT_HANGUP")
    }

    // MARK: Recording

    /// Records the call (agent video + audio, caller video + audio) without re-encoding; hold,
    /// mute and transfer actions of this bot are written as chapters. Finalised at the call's end.
    public func startRecording(to url: URL, format: RecordingFormat = .matroska) async throws(RecordingError) -> CallRecording {
        guard let peer = peerConnection else { throw .pipeline("the call's media has not started") }
        guard recording.value == nil else { throw .alreadyStarted }
        let started = try await peer.startRecording(to: url, format: format, labels: RecordingLabels(local: "agent", remote: "caller"))
        try await keep(.tracks(started))
        return started
    }

    /// Records the call as `layout` says: `.separateTracks` as `startRecording(to:format:)`;
    /// `.pictureInPicture` as one re-encoded picture, the caller full-frame at the size its
    /// picture arrives in and this bot's own picture inset (WebM or Matroska).
    public func startRecording(to url: URL, format: RecordingFormat = .matroska, layout: RecordingLayout) async throws(RecordingError) {
        switch layout {
        case .separateTracks:
            _ = try await startRecording(to: url, format: format)
        case .pictureInPicture:
            guard let peer = peerConnection else { throw .pipeline("the call's media has not started") }
            guard recording.value == nil else { throw .alreadyStarted }
            try await keep(.composite(try await peer.startCompositeRecording(to: url, format: format)))
        }
    }

    /// Keeps `started` as the call's recording; of two overlapping starts the later is kept and
    /// the earlier finalised.
    private func keep(_ started: Recording) async throws(RecordingError) {
        guard let displaced = recording.withLock({ value in defer { value = started }; return value }) else { return }
        _ = try await Self.stop(displaced)
    }

    /// Whether a recording runs (either layout).
    public var isRecording: Bool { recording.value != nil }

    /// The running recording with separate tracks, if that is what runs.
    public var activeRecording: CallRecording? {
        if case .tracks(let tracks)? = recording.value { tracks } else { nil }
    }

    /// Finalises the recording, if any.
    @discardableResult
    public func stopRecording() async throws(RecordingError) -> RecordingSummary? {
        guard let active = recording.withLock({ value in defer { value = nil }; return value }) else { return nil }
        return try await Self.stop(active)
    }

    private static func stop(_ recording: Recording) async throws(RecordingError) -> RecordingSummary {
        switch recording {
        case .tracks(let tracks): try await tracks.stop()
        case .composite(let composite): try await composite.stop()
        }
    }

    // MARK: End

    func serviceEnded(reason: String) {
        Task {
            await closeMedia(sendBye: false)
            finish(reason: reason)
        }
    }

    private func remoteLeft() {
        Task {
            await closeMedia(sendBye: false)
            finish(reason: "CALLER_LEFT")
        }
    }

    private func finish(reason: String) {
        let first = state.withLock { state in defer { state.ended = true }; return !state.ended }
        guard first else { return }
        emit(.ended(reason: reason))
        broadcaster.finish()
        bot?.forget(self)
        // The call's media threads are gone; what they freed goes back to the system, so a bot's
        // memory returns to where it was after every call (ProcessMemory explains why it would not).
        ProcessMemory.releaseFreedMemory()
    }

    func closeMedia(sendBye: Bool) async {
        let (room, peer, tasks, channel) = state.withLock { state in
            defer { state.room = nil; state.peer = nil; state.tasks = []; state.channel = nil }
            return (state.room, state.peer, state.tasks, state.channel)
        }
        for task in tasks { task.cancel() }
        if let summary = try? await stopRecording() {
            Logger.info("[agent] recording \(summary.url.path): \(summary.tracks.count) tracks, \(summary.duration)")
        }
        channel?.close()
        if let room { await room.hangUp(peer: peer, sendBye: sendBye) } else { await peer?.close() }
    }
}

extension AgentBot {
    func eventError(_ message: String) { Logger.warn("[agent \(configuration.name)] \(message)") }
}
