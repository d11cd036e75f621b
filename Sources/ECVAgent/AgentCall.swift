import CallEngine
import ECV
import ECVProtocol
import Foundation
import GLibCore
import GStreamer
import MediaPipeline
import MediaRuntime
import WebRTC

/// One call an agent bot accepted: the room, the peer connection, the text channel and the
/// agent's commands (hold, flash, photo, status, transfer, hangup).
public final class AgentCall: Sendable {
    public let offer: CallOffer
    public var rtcId: String { offer.rtcId }
    /// The end reason of a call whose caller left the room (`bye`) before the service said why.
    public static let callerLeft = CallEndReason.callerLeft
    /// The end reason of a call whose signaling socket could not be reopened within the window
    /// (the service is gone): the media ran on until then.
    public static let signalingLost = CallEndReason.signalingLost
    /// Weak: a call's tasks (a late `bye`, the service's end) may outlive the bot that took it.
    weak let bot: AgentBot?
    /// Every event of the call, replayed to each subscriber (see `events()`).
    private let broadcaster = Broadcaster<AgentCallEvent>(replay: .all)

    private struct State {
        var leg: CallLeg?
        var ended = false
        /// `closeMedia` ran: a session that `start()` builds later would never be closed, so none is.
        var mediaClosed = false
        /// The one closing of the media (the recording finalised, then the peer and the room),
        /// which every later `closeMedia` waits for.
        var closing: Task<Void, Never>?
        var connected = false
        var flashWaiters: [OneShot<DataChannelCommand.FlashApproval, Never>] = []
    }
    /// The call's one state, behind one lock.
    private let state = Locked(State())
    /// The call's own tasks (the text channel's reader), cancelled when its media closes.
    private let tasks = TaskSet()
    /// Where the caller's decoded pictures go (`onCallerFrame`).
    private let callerFeed = RendererFeed()

    init(offer: CallOffer, bot: AgentBot) {
        self.offer = offer
        self.bot = bot
        InstanceCounter.increment("AgentCall")
    }

    deinit { InstanceCounter.decrement("AgentCall") }

    /// Every event of the call: those so far first, then each new one, none missed or repeated.
    /// A bot gets the call in `callStarted` while its media is already starting, so a stream of
    /// "events from now on" taken then would race `joinedRoom`, `connected` and `textChannelOpen`
    /// (under load it lost them, and a bot waiting for one of them waited for ever).
    public func events() -> AsyncStream<AgentCallEvent> {
        broadcaster.subscribe()
    }
    /// Only the events after this call: for waiting on the answer to a request about to be sent
    /// (an earlier answer of the same kind is in the history `events()` starts with).
    public func upcomingEvents() -> AsyncStream<AgentCallEvent> { broadcaster.subscribe(replaying: false) }
    /// Every event so far, in order (for bots that subscribe late and for tests).
    public var eventHistory: [AgentCallEvent] { broadcaster.history }
    /// The peer connection, once the media started (the SDK's own tests and diagnostics).
    package var peerConnection: PeerConnection? { leg?.peer }
    private var leg: CallLeg? { state.value.leg }
    public var isConnected: Bool { state.value.connected }
    public var isEnded: Bool { state.value.ended }

    /// The call's media pipeline as Graphviz text, for diagnostics; nil before the media started.
    public func pipelineDOT() async -> String? { await leg?.pipelineDOT() }

    /// What the offer/answer agreed on ("audio"/"video" → "OPUS/111", "VP8/96"); empty before.
    public func negotiatedCodecs() async -> [String: String] { leg?.negotiatedCodecNames ?? [:] }

    /// A stats sample of the call's peer connection (with the bandwidth adaptation's decision);
    /// nil before the media runs or after the call ended.
    public func stats() async -> PeerStats? { await leg?.stats() }

    /// Receives the caller's decoded frames (when the bot decodes video).
    public func onCallerFrame(_ handler: @escaping @Sendable (VideoFrame) -> Void) { callerFeed.current = FrameHandler(handler) }

    /// Records the event in the history and delivers it; `events()` sees each event exactly once,
    /// in the order of the history.
    func emit(_ event: AgentCallEvent) { broadcaster.yield(event) }

    // MARK: Media

    /// Joins the room and starts the media (the bot does it on accepting, unless
    /// `joinsRooms` is false; tests then start it after the caller joined, to make it the answerer).
    package func start() async {
        guard let bot else { return }
        let configuration = bot.configuration
        let options = RoomSignaling.Options(parameters: configuration.parameters, webrtcUrl: configuration.webrtcUrl,
                                            signalingUrl: configuration.signalingUrl, pins: configuration.pinnedCertificates,
                                            signalingPins: configuration.signalingPinnedCertificates, credential: bot.sessionToken,
                                            trustedCAFile: configuration.trustedCAFile)
        let media = MediaConfiguration(parameters: configuration.parameters.media, video: configuration.video, audio: configuration.audio,
                                       receiveVideo: configuration.receiveVideo, receiveAudio: configuration.receiveAudio,
                                       sendsMedia: configuration.sendsMedia)
        let signaling: RoomLegSignaling
        do {
            signaling = try RoomLegSignaling(room: rtcId, options: options) { [weak self] step in
                if case .joined(let joined) = step { self?.emit(.joinedRoom(initiator: joined.isInitiator)) }
            }
        } catch {
            bot.eventError("call \(rtcId): \(error)")
            await hangup()
            return
        }
        // The bot's ConnectParameters decide; an agent has no SDK configuration above them.
        var plan = CallLegPlan(peer: PeerConfiguration(
            iceServers: (configuration.iceServers + configuration.parameters.iceServers).map(WebRTC.ICEServer.init),
            iceTransportPolicy: configuration.parameters.iceTransportPolicy == .relay ? .relay : .all,
            jitterBufferLatencyMs: configuration.jitterBufferLatencyMs, media: media))
        plan.createdChannels = configuration.parameters.textChannelConfig.flatMap { $0.enabled ? [$0] : nil } ?? []
        plan.boundChannels = plan.createdChannels
        plan.remoteVideo = callerFeed
        let leg = CallLeg(plan: plan, signaling: signaling, observer: self)
        let ended = state.withLock { state in
            let over = state.ended || state.mediaClosed
            if !over { state.leg = leg }
            return over
        }
        guard !ended else { await signaling.close(peer: nil, sendBye: false); return }
        do { try await leg.start() } catch {
            guard !leg.isClosed else { return }
            bot.eventError("call \(rtcId): \(error)")
            await hangup()
        }
    }

    private func attach(_ channel: DataChannelHandle) {
        let events = channel.events()
        tasks.run { [weak self] in
            for await event in events {
                guard let self else { return }
                switch event {
                case .open: self.emit(.textChannelOpen)
                case .text(let text): self.received(text)
                default: break
                }
            }
        }
    }

    private func received(_ text: String) {
        switch DataChannelCommand(parsing: text) {
        case .status(let media, let muted, _):
            emit(.callerStatus(media: media, muted: muted))
            let period = "caller \(media.rawValue.lowercased()) muted"
            chapter { muted ? try $0.beginPeriod(period) : try $0.endPeriod(period) }
        case .flashReply(let request, let approval):
            emit(.flashReply(turningOn: request == .on, approval: approval))
            let waiters = state.withLock { state in defer { state.flashWaiters = [] }; return state.flashWaiters }
            for waiter in waiters { waiter.resolve(.success(approval)) }
        default:
            emit(.text(text))
        }
    }

    /// Writes this bot's action into the recording's chapters, when one with separate tracks runs.
    private func chapter(_ write: (CallRecording) throws -> Void) {
        guard let recording = activeRecording else { return }
        // The action itself happened; a chapter fails only once the recording is stopping.
        do { try write(recording) } catch { Logger.debug("[agent] call \(rtcId): no chapter: \(error)") }
    }

    // MARK: Commands

    /// Sends a command (or any text) to the caller on the text channel.
    public func send(_ command: DataChannelCommand) throws(AgentBotError) {
        guard let channel = leg?.channels.first else { throw .textChannel("the call's text channel is not open") }
        do { try channel.send(command.text) } catch { throw .textChannel(error.description) }
    }

    public func hold() throws(AgentBotError) {
        try send(.hold(rtcId: rtcId))
        chapter { try $0.beginPeriod("hold") }
    }

    public func pickup() throws(AgentBotError) {
        try send(.pickup(rtcId: rtcId))
        chapter { try $0.endPeriod("hold") }
    }
    public func takePhoto(_ on: Bool) throws(AgentBotError) { try send(on ? .takePhotoOn : .takePhotoOff) }
    public func sendStatus(media: DataChannelCommand.MediaKind, muted: Bool) throws(AgentBotError) {
        try send(.status(media: media, muted: muted, rtcId: rtcId))
    }

    /// Asks the caller to switch the torch and waits for the answer; no answer within the bot's
    /// `flashReplyTimeout` counts as `.refused`.
    public func requestFlash(_ on: Bool) async throws(AgentBotError) -> DataChannelCommand.FlashApproval {
        let reply = OneShot<DataChannelCommand.FlashApproval, Never>()
        state.withLock { $0.flashWaiters.append(reply) }
        try send(on ? .flashOn : .flashOff)
        let timer = MainLoop.shared.schedule(after: bot?.configuration.flashReplyTimeout ?? .seconds(5)) { reply.resolve(.success(.refused)) }
        defer { timer.cancel() }
        return await reply.value()
    }

    /// Transfers the call to a queue or another agent (the service does it; the caller re-queues).
    public func transfer(to target: TransferTarget) async throws(AgentBotError) {
        chapter { try $0.mark("transfer to \(target.description)") }
        guard let bot else { throw .notConnected }
        try await bot.request(.transfer(rtcId: rtcId, target: target))
    }

    public func cancelTransfer() async throws(AgentBotError) {
        guard let bot else { throw .notConnected }
        try await bot.request(.cancelTransfer(rtcId: rtcId))
    }

    /// Ends the call for everyone: the service tells the caller (`REMOTE_HANGUP` there). The
    /// media closes here whatever the service answers.
    public func hangup() async { await hangup(reason: .agentHangup) }

    /// How long a caller gets to end a call without a common codec itself.
    static let noCommonCodecGrace: Duration = .seconds(2)

    private func hangup(reason: CallEndReason) async {
        guard !state.value.ended else { return }
        do { try await bot?.request(.hangup(rtcId: rtcId)) } catch {
            bot?.eventError("call \(rtcId): the service did not take the hangup: \(error)")
        }
        await closeMedia(sendBye: true)
        finish(reason: reason)
    }

    // MARK: Recording

    /// Records the call as `layout` says: by default without re-encoding (agent video + audio,
    /// caller video + audio), with this bot's hold, mute and transfer actions as chapters;
    /// `.pictureInPicture` as one re-encoded picture, the caller full-frame at the size its
    /// picture arrives in and this bot's own picture inset (WebM or Matroska). Finalised when
    /// the call ends, or by `stopRecording()`.
    public func startRecording(to url: URL, format: RecordingFormat = .matroska,
                               layout: RecordingLayout = .separateTracks) async throws(AgentBotError) {
        guard let leg else { throw .call(.recording("the call's media has not started")) }
        do {
            try await leg.startRecording(to: url, format: format, layout: layout, labels: RecordingLabels(local: "agent", remote: "caller"))
        } catch {
            throw .call(.recording("cannot record to \(url.path): \(error)"))
        }
    }

    /// Whether a recording runs (either layout).
    public var isRecording: Bool { leg?.recording != nil }

    /// The running recording with separate tracks, where this bot's actions become chapters.
    package var activeRecording: CallRecording? { leg?.recording?.tracks }

    /// Finalises the recording, if any.
    @discardableResult
    public func stopRecording() async throws(AgentBotError) -> RecordingSummary? {
        do { return try await leg?.stopRecording() } catch {
            throw .call(.recording("the recording was not finalised: \(error)"))
        }
    }

    // MARK: End

    func serviceEnded(reason: CallEndReason) {
        Task {
            await closeMedia(sendBye: false)
            finish(reason: reason)
        }
    }

    /// The bot logged out, which ends its calls on the service (`AGENT_LOST`); the media is closed.
    func loggedOut() { finish(reason: .agentLost) }

    private func remoteLeft() {
        Task {
            await closeMedia(sendBye: false)
            finish(reason: Self.callerLeft)
        }
    }

    private func finish(reason: CallEndReason) {
        let first = state.withLock { state in defer { state.ended = true }; return !state.ended }
        // A second end (the service's after the caller's `bye`) still leaves the bot's ending calls.
        guard first else { bot?.forget(self); return }
        emit(.ended(reason: reason))
        broadcaster.finish()
        bot?.forget(self)
        // The call's media threads are gone; what they freed goes back to the system, so a bot's
        // memory returns to where it was after every call (ProcessMemory explains why it would not).
        ProcessMemory.releaseFreedMemory()
    }

    /// Closes the media once: the recording is finalised (its file complete, titles and all) before
    /// the peer and the room close. A second call, from whichever path ended the call too (the
    /// service's end, the caller's `bye`, a logout), returns only when the first is done, so a bot
    /// that exits after `logout()` never cuts a recording's finalisation short.
    func closeMedia(sendBye: Bool) async {
        let closing = state.withLock { state -> Task<Void, Never> in
            if let closing = state.closing { return closing }
            state.mediaClosed = true
            let leg = state.leg
            let closing = Task { await self.close(leg, sendBye: sendBye) }
            state.closing = closing
            return closing
        }
        await closing.value
    }

    private func close(_ leg: CallLeg?, sendBye: Bool) async {
        tasks.cancelAll()
        switch await leg?.close(sendBye: sendBye) {
        case .success(let summary)?:
            Logger.info("[agent] recording \(summary.url.path): \(summary.tracks.count) tracks, \(summary.duration)")
        case .failure(let error)?:
            bot?.eventError("call \(rtcId): the recording was not finalised: \(error)")
            emit(.recordingFailed(error.description))
        case nil:
            break
        }
    }
}

extension AgentCall: CallLegObserver {
    package func leg(_ leg: CallLeg, completed step: CallLegStep) async {
        if case .mediaStarted(let channels) = step, let channel = channels.first { attach(channel) }
    }

    package func leg(_ leg: CallLeg, observed event: CallLegEvent) async {
        switch event {
        case .peer(.stateChanged(.connected)):
            state.withLock { $0.connected = true }
            emit(.connected)
        case .peer(.stateChanged(.disconnected)), .peer(.stateChanged(.failed)):
            // The leg rebuilds a failed peer (webrtcbin cannot restart ICE).
            state.withLock { $0.connected = false }
            emit(.disconnected)
        case .peer(.remoteStream(let stream)):
            emit(.remoteStream(kind: stream.kind, codec: stream.encodingName))
        case .peer(.error(let message)):
            bot?.eventError("call \(rtcId): webrtc: \(message)")
        case .peer(.bandwidthChanged(let decision)):
            emit(.bandwidthChanged(targetKbps: decision.targetKbps, estimateKbps: decision.estimateKbps, reason: decision.reason))
        case .peer(.unmatchedMedia(_, let reason)):
            bot?.eventError("call \(rtcId): \(reason)")
        case .peer(.mediaSilent(let direction, let everCarried)):
            bot?.eventError("call \(rtcId): no \(direction) for 5 s" + (everCarried ? "" : ", none at all so far"))
            emit(.mediaSilent(kind: direction.kind, direction: direction.sending ? .sent : .received, everCarried: everCarried))
        case .peer(.noCommonCodec(let kind, let ours, let theirs)):
            bot?.eventError("call \(rtcId): \(NoCommonCodec.message(kind: kind.rawValue, ours: ours, theirs: theirs))")
            emit(.noCommonCodec(kind: kind, ours: ours, theirs: theirs))
            Task {
                // The caller learns it from our answer (or its own) and ends the call itself,
                // reporting why; a caller that does not is hung up on.
                try? await Task.sleep(for: Self.noCommonCodecGrace)
                await hangup(reason: .noCommonCodec)
            }
        case .peer(.adoptedDataChannel(let remoteLabel, let configuredLabel)):
            bot?.eventError("call \(rtcId): the caller opened its text channel as '\(remoteLabel)', not '\(configuredLabel)'; using it as the text channel")
        case .rebuildFailed(let error):
            bot?.eventError("call \(rtcId): the peer failed and could not be rebuilt: \(error)")
        case .remoteLeft:
            remoteLeft()
        case .signalingFailure(let reason):
            bot?.eventError("call \(rtcId): signaling: \(reason)")
        case .signalingReconnecting(let reason):
            bot?.eventError("call \(rtcId): signaling \(reason); reconnecting")
        case .signalingReconnected:
            Logger.info("[agent] call \(rtcId): signaling reconnected")
        case .signalingClosed(let code, let reason) where code != ECVCloseCode.normal:
            // Without signaling the call can neither be renegotiated nor ended by the other side.
            bot?.eventError("call \(rtcId): the signaling socket closed for good (\(code) \(reason))")
            Task {
                await closeMedia(sendBye: false)
                finish(reason: Self.signalingLost)
            }
        case .peer, .received, .signalingClosed:
            break
        }
    }
}

extension AgentBot {
    func eventError(_ message: String) { Logger.warn("[agent \(configuration.name)] \(message)") }
}
