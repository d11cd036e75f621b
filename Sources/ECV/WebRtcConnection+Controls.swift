import CallEngine
import ECVProtocol
import MediaRuntime
import WebRTC

/// The call controls of the seed guide, each emitting its event.
extension WebRtcConnection {
    /// Mutes (false) or unmutes the microphone: `AudioMuted`/`AudioUnmuted`, and the agent is told
    /// (`STATUS|AUDIO|MUTED|<rtcId>`). The remote side hears silence; timing continues.
    public func setAudioEnabled(state enabled: Bool) { setSending(.audio, enabled) }

    /// Disables (false) or enables the camera: `VideoMuted`/`VideoUnmuted`; the agent sees black
    /// frames and is told (`STATUS|VIDEO|MUTED|<rtcId>`).
    public func setVideoEnabled(state enabled: Bool) { setSending(.video, enabled) }

    private func setSending(_ kind: DataChannelCommand.MediaKind, _ enabled: Bool) {
        inControlOrder { media in
            self.state.withLock { state in
                if kind == .audio { state.controls.audioEnabled = enabled } else { state.controls.videoEnabled = enabled }
            }
            self.applyControls(to: media)
            self.call.emit(kind == .audio ? (enabled ? .AudioUnmuted : .AudioMuted) : (enabled ? .VideoUnmuted : .VideoMuted))
            self.sendCommand(.status(media: kind, muted: !enabled, rtcId: self.call.rtcId))
        }
    }

    /// Runs a control in the leg's one order of operations (`CallLeg.inControlOrder`): each
    /// control changes the state, applies it, raises its event and tells the agent as one step.
    func inControlOrder(_ control: @escaping @Sendable (SendMedia?) -> Void) {
        if let leg { leg.inControlOrder(control) } else { control(nil) }
    }

    /// Switches between the registered front and back sources (a pad switch, no renegotiation).
    public func switchCamera() async throws(ECVError) {
        guard let media = await peerConnection?.media else {
            let error = ErrorObject(name: .CAMERA_SWITCH_FAILED, message: "the call has no running video")
            call.fail(error.name, error.message, endingCall: false)
            throw ECVError(error)
        }
        do {
            let camera = try media.toggleCamera()
            Logger.info("[\(call.rtcId)] camera: \(camera)")
        } catch {
            call.fail(.CAMERA_SWITCH_FAILED, error.description, endingCall: false)
            throw ECVError(call.lastError, underlying: error)
        }
    }

    /// Switches the torch through the `flashlightHandler`: `FlashOn`/`FlashOff`, or an `Error`
    /// (`FLASHLIGHT_UNAVAILABLE`) when there is none (every headless machine by default).
    public func setFlashlightEnabled(state: Bool) {
        guard let handler = flashlightHandler else {
            call.fail(.FLASHLIGHT_UNAVAILABLE, "no flashlight handler is installed on this device", endingCall: false)
            return
        }
        Task {
            if await handler.setTorch(on: state) {
                call.emit(state ? .FlashOn : .FlashOff)
            } else {
                call.fail(.FLASHLIGHT_UNAVAILABLE, "the flashlight handler could not switch the torch", endingCall: false)
            }
        }
    }

    /// Sends a custom text message on the text channel (queued until it opens).
    public func sendTextMessage(_ text: String) {
        guard let channel = textChannel else {
            call.fail(.TEXT_CHANNEL_ERROR, "the text channel is not enabled or not created yet", endingCall: false)
            return
        }
        do { try channel.send(text) } catch {
            call.fail(.TEXT_CHANNEL_ERROR, error.description, endingCall: false)
        }
    }

    func sendCommand(_ command: DataChannelCommand) {
        guard let channel = textChannel, !state.withLock({ $0.live.closed }) else { return }
        do { try channel.send(command.text) } catch {
            Logger.warn("[\(call.rtcId)] cannot send \(command.text): \(error)")
        }
    }

    /// Applies what the app asked for, minus what a hold imposes, to the running graph, in the
    /// peer's order of operations (after the controls submitted before it).
    func applyMediaState() {
        inControlOrder { media in self.applyControls(to: media) }
    }

    /// Applies the controls' state as it is now to `media`. A control that fails is reported
    /// (`Error`), never hidden behind the event already sent.
    private func applyControls(to media: SendMedia?) {
        guard let media else { return }
        let sendState = state.withLock { state in
            SendState(audioEnabled: state.controls.audioEnabled && !state.controls.onHold,
                      videoEnabled: parameters.videoCallEnabled ? state.controls.videoEnabled && !state.controls.onHold : nil)
        }
        do throws(MediaRuntimeError) { try CallLeg.apply(sendState, to: media) } catch {
            call.fail(.WEBRTC_FAILED, "cannot apply the media controls (audio \(sendState.audioEnabled ? "on" : "off"), video \(sendState.videoEnabled == true ? "on" : "off")): \(error)",
                      cause: .webrtc(error.description), endingCall: false)
        }
    }

    /// Waits until every control submitted before has been applied (tests, diagnostics).
    package func controlsApplied() async { await leg?.controlsApplied() }
}
