import ECVProtocol
import MediaRuntime
import WebRTC

/// The call controls of the seed guide, each emitting its event.
extension WebRtcConnection {
    /// Mutes (false) or unmutes the microphone: `AudioMuted`/`AudioUnmuted`, and the agent is told
    /// (`STATUS|AUDIO|MUTED|<rtcId>`). The remote side hears silence; timing continues.
    public func setAudioEnabled(state: Bool) {
        self.state.withLock { $0.controls.audioEnabled = state }
        applyMediaState()
        call.emit(state ? .AudioUnmuted : .AudioMuted)
        sendCommand(.status(media: .audio, muted: !state, rtcId: call.rtcId))
    }

    /// Disables (false) or enables the camera: `VideoMuted`/`VideoUnmuted`; the agent sees black
    /// frames and is told (`STATUS|VIDEO|MUTED|<rtcId>`).
    public func setVideoEnabled(state: Bool) {
        self.state.withLock { $0.controls.videoEnabled = state }
        applyMediaState()
        call.emit(state ? .VideoUnmuted : .VideoMuted)
        sendCommand(.status(media: .video, muted: !state, rtcId: call.rtcId))
    }

    /// Switches between the registered front and back sources (a pad switch, no renegotiation).
    public func switchCamera() async throws {
        guard let media = await peerConnection?.media else {
            let error = ErrorObject(name: .CAMERA_SWITCH_FAILED, message: "the call has no running video")
            call.fail(error.name, error.message, endingCall: false)
            throw CallControlError(error)
        }
        do {
            let camera = try media.toggleCamera()
            Logger.info("[\(call.rtcId)] camera: \(camera)")
        } catch {
            call.fail(.CAMERA_SWITCH_FAILED, error.description, endingCall: false)
            throw CallControlError(call.lastError)
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
    /// peer's order of operations: calls made one after another apply in that order, and each
    /// applies the state as it is when its turn comes, so the graph ends as the last call left
    /// it. A control that fails is reported (`Error`), never hidden behind the event already sent.
    func applyMediaState() {
        guard let peer = peerConnection else { return } // applied when the peer starts (GotLocalStream)
        let videoCall = parameters.videoCallEnabled
        peer.submit { [weak self] peer in
            guard let self, let media = peer.media else { return }
            let (audioOn, videoOn) = self.state.withLock { ($0.controls.audioEnabled && !$0.controls.onHold, $0.controls.videoEnabled && !$0.controls.onHold) }
            do throws(MediaRuntimeError) {
                try media.setAudioMuted(!audioOn)
                if videoCall { try media.setVideoMuted(!videoOn) }
            } catch {
                self.call.fail(.WEBRTC_FAILED, "cannot apply the media controls (audio \(audioOn ? "on" : "off"), video \(videoOn ? "on" : "off")): \(error)",
                               endingCall: false)
            }
        }
    }

    /// Waits until every control submitted before has been applied (tests, diagnostics).
    package func controlsApplied() async {
        await peerConnection?.perform { _ in }
    }
}

/// A call control failed; the `ErrorObject` is also the call's `lastError`.
public struct CallControlError: Error, Sendable, CustomStringConvertible {
    public let error: ErrorObject
    init(_ error: ErrorObject) { self.error = error }
    public var description: String { error.description }
}
