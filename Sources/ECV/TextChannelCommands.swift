import ECVProtocol
import WebRTC

/// What the caller does with the agent's text-channel commands (docs/protocol.md §4).
extension WebRtcConnection {
    func attachTextChannel(_ channel: DataChannelHandle) {
        let events = channel.events()
        let task = Task { [weak self] in
            for await event in events {
                guard let self else { return }
                switch event {
                case .open: self.call.emit(.TextChannelConnected, detail: channel.label)
                case .text(let text): await self.received(text)
                case .binary(let bytes): Logger.debug("[\(self.call.rtcId)] text channel: \(bytes.count) binary bytes ignored")
                case .error(let message): Logger.warn("[\(self.call.rtcId)] text channel: \(message)")
                case .closed: break
                }
            }
        }
        keep(task)
    }

    /// Every text received is a `TextChannelMessage` (detail: the raw text), as the seed's guide
    /// says. A command this call acts on raises its own event first (`StartHold`, `FlashRequested`,
    /// `RemoteVideoMuted`, …) and the `TextChannelMessage` right after it; anything else (unknown
    /// text, a command naming another rtcId) is the `TextChannelMessage` alone.
    func received(_ text: String) async {
        let command = DataChannelCommand(parsing: text)
        let rtcId = call.rtcId
        func forThisCall(_ id: String?) -> Bool { id == nil || id == rtcId }
        let raw = { self.call.emit(.TextChannelMessage, detail: text) }
        switch command {
        case .hold(let id) where forThisCall(id):
            holdChanged(onHold: true, command: text)
        case .pickup(let id) where forThisCall(id):
            holdChanged(onHold: false, command: text)
        case .status(let media, let muted, let id) where forThisCall(id):
            switch (media, muted) {
            case (.audio, true): call.emit(.RemoteAudioMuted, detail: text)
            case (.audio, false): call.emit(.RemoteAudioUnmuted, detail: text)
            case (.video, true): call.emit(.RemoteVideoMuted, detail: text)
            case (.video, false): call.emit(.RemoteVideoUnmuted, detail: text)
            }
            raw()
        case .flashOn, .flashOff:
            let on = command == .flashOn
            call.emit(.FlashRequested, detail: text, data: ["requestedBy": "agent", "torch": on ? "on" : "off"])
            raw()
            await flashRequested(on: on, command: text)
        case .takePhotoOn:
            call.emit(.TakePhotoOn, detail: text)
            raw()
            if parameters.autoHandleCameraSwitch { await enterPhotoMode() }
        case .takePhotoOff:
            call.emit(.TakePhotoOff, detail: text)
            raw()
            if parameters.autoHandleCameraSwitch { await leavePhotoMode() }
        default:
            raw()
        }
    }

    /// HOLD or PICKUP: the hold state, `StartHold`/`EndHold` and the `TextChannelMessage` at once,
    /// in the order the agent's texts came; the media follow in the order of the call controls.
    private func holdChanged(onHold: Bool, command text: String) {
        state.withLock { $0.controls.onHold = onHold }
        if holdSideEffects { applyMediaState() }
        call.emit(onHold ? .StartHold : .EndHold, detail: text)
        call.emit(.TextChannelMessage, detail: text)
    }

    /// Whether hold mutes local media: the call's `ConnectParameters` choice, else the SDK configuration's.
    var holdSideEffects: Bool { parameters.holdSideEffects(configured: call.sdk.config.autoHandleHoldSideEffects) }

    /// The agent asked for the torch (`FlashRequested` already raised): the app's approval, the
    /// switch, then the reply. `FlashOn`/`FlashOff` are the torch's states (the Turkish guide's
    /// list): raised only when the handler switched it, before the agent hears `ACCEPTED`; a
    /// refusal or a missing/failing torch raises neither.
    private func flashRequested(on: Bool, command text: String) async {
        let request: DataChannelCommand.FlashRequest = on ? .on : .off
        guard let handler = flashlightHandler else {
            sendCommand(.flashReply(request: request, approval: .unavailable))
            return
        }
        guard await handler.approve(turningOn: on) else {
            sendCommand(.flashReply(request: request, approval: .refused))
            return
        }
        let switched = await handler.setTorch(on: on)
        if switched { call.emit(on ? .FlashOn : .FlashOff, detail: text, data: ["requestedBy": "agent"]) }
        sendCommand(.flashReply(request: request, approval: switched ? .accepted : .unavailable))
    }

    /// Photo mode shows the agent the back source; the previous camera comes back afterwards.
    private func enterPhotoMode() async {
        guard let media = await peerConnection?.media, media.cameras.contains("back") else { return }
        let previous = media.activeCamera
        state.withLock { $0.controls.cameraBeforePhoto = previous }
        do { try media.switchCamera(to: "back") } catch { Logger.warn("[\(call.rtcId)] photo mode: \(error)") }
    }

    private func leavePhotoMode() async {
        guard let media = await peerConnection?.media,
              let previous = state.withLock({ state in defer { state.controls.cameraBeforePhoto = nil }; return state.controls.cameraBeforePhoto })
        else { return }
        do { try media.switchCamera(to: previous) } catch { Logger.warn("[\(call.rtcId)] photo mode: \(error)") }
    }
}
